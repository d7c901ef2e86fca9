import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { askTurnUpdate, entityWorkflowId, requestTurnSignal, turnDoneSignal, type Activities, type EntityInput, type TurnAsk } from '../contracts';
import { keyEntityFlow } from '../src/flows';
import { entityRecord, keyEvent, recordApplied, recordParked } from '../src/db/entities';
import { workflowState } from '../src/temporal/availability';
import { coalesceWindow } from '../src/flows';
import type { ActivityDeps } from './index';
import { count, observe } from './metrics';

/** How long (ms) an event waits for its entity to answer its update before it asks by signal instead. */
const UPDATE_DEADLINE = 5_000;

/** The activities of keyed flows' turns (workflows/entity.ts, workflows/turns.ts). */
export function createEntityActivities({
  db,
  temporal,
  taskQueue,
}: Pick<ActivityDeps, 'db' | 'temporal' | 'taskQueue'>): Pick<
  Activities,
  'askTurn' | 'endTurn' | 'requestTurn' | 'readEntity' | 'recordEntity' | 'eventWorkflowOpen'
> {
  /**
   * How the entity of an ask starts if it is not running: from what the database kept of its key,
   * so that it answers in its first workflow task. Marks the event as one of the key's, and says
   * whether another of the key's events is not done yet (the key is busy).
   */
  const entityStart = async (ask: TurnAsk) => {
    const { flow, source, key, order, coalesce = null } = ask;
    const { last, parked, othersOpen } = await keyEvent(db, ask, ask.ledgerEventId ?? ask.request.eventId);
    const input: EntityInput = { flow, source, key, order, coalesce: coalesce && coalesceWindow(coalesce), last, parked };
    const start = { workflowId: entityWorkflowId(flow, source, key), taskQueue, args: [input] as [EntityInput], staticSummary: `${source} · ${flow} · ${key}` };
    return { start, busy: othersOpen || parked !== null };
  };
  /** Signal-with-start: the request is in the entity's history as soon as the server answers; the turn comes as a signal. */
  const askBySignal = (ask: TurnAsk, start: Awaited<ReturnType<typeof entityStart>>['start']) =>
    temporal.workflow.signalWithStart(keyEntityFlow.workflow, { ...start, signal: requestTurnSignal, signalArgs: [ask.request] });

  return {
    /**
     * Update-with-start, answered in the entity's workflow task that takes it: the turn when the key
     * is free, else null (the turn comes as a signal). An event of a busy key (another of its events
     * not done, or one parked) or of a coalescing key would only be told to wait, so it asks by
     * signal-with-start: the entity takes a burst of signals in few workflow tasks, and Temporal
     * takes at most 10 updates in flight per workflow. So does an event whose update is refused or
     * not answered within UPDATE_DEADLINE (the entity closing, or slow). A repeat (activity retry,
     * reset, an update taken after all) asks again, and the entity answers the same.
     */
    async askTurn(ask) {
      const { start, busy } = await entityStart(ask);
      if (!busy && ask.order !== 'coalesce') {
        try {
          const turn = await temporal.withDeadline(Date.now() + UPDATE_DEADLINE, () =>
            temporal.workflow.executeUpdateWithStart(askTurnUpdate, {
              args: [ask.request],
              startWorkflowOperation: new WithStartWorkflowOperation(keyEntityFlow.workflow, { ...start, workflowIdConflictPolicy: 'USE_EXISTING' }),
            }),
          );
          count('turnRequests', { flow: ask.flow, by: 'update' });
          return { entityId: start.workflowId, turn };
        } catch {
          await askBySignal(ask, start);
          count('turnRequests', { flow: ask.flow, by: 'update-refused' });
          return { entityId: start.workflowId, turn: null };
        }
      }
      await askBySignal(ask, start);
      count('turnRequests', { flow: ask.flow, by: 'signal' });
      return { entityId: start.workflowId, turn: null };
    },

    async endTurn({ entityId, done }) {
      try {
        await temporal.workflow.getHandle(entityId).signal(turnDoneSignal, done);
      } catch (error) {
        // The entity is gone (terminated): nothing waits to hear how the event ended.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    },

    async requestTurn(ask) {
      const { start } = await entityStart(ask);
      await askBySignal(ask, start);
      return start.workflowId;
    },

    async readEntity(ref) {
      const record = await entityRecord(db, ref);
      return { last: record?.last ?? null, parked: record?.parked ?? null };
    },

    async recordEntity({ applied, receivedAt, parked, ...ref }) {
      if (applied) await recordApplied(db, ref, applied);
      if (applied && receivedAt) observe('keyLag', Date.now() - Date.parse(receivedAt), { flow: ref.flow });
      if (parked !== undefined) await recordParked(db, ref, parked);
    },

    eventWorkflowOpen: async (workflowId) => (await workflowState(temporal, workflowId)) === 'running',
  };
}
