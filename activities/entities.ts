import { WorkflowNotFoundError } from '@temporalio/client';
import {
  ENTITY_PRIORITY,
  entityFlowOf,
  entityWorkflowId,
  keyGivenSignal,
  nextTurns,
  requestTurnSignal,
  turnDoneSignal,
  turnSignal,
  type Activities,
  type Applied,
  type EntityInput,
  type TurnAsk,
  type TurnDone,
} from '../contracts';
import { keyEntityFlow } from '../src/flows';
import { claimKey, entityRecord, freeKey, keyHolder, recordApplied, recordParked, releaseKey, takeKey, type Parked } from '../src/db/entities';
import { storeWaiting, takeWaiting } from '../src/db/entity-waiting';
import { isNotRunning, workflowState } from '../src/temporal/availability';
import { coalesceWindow } from '../src/flows';
import type { ActivityDeps } from './index';
import { count, observe } from './metrics';

/** Turns `giveTurns` sends at once. */
const SIGNALS_AT_ONCE = 50;

/** The activities of keyed flows' turns (workflows/entity.ts, workflows/turns.ts). */
export function createEntityActivities({
  db,
  temporal,
  taskQueue,
}: Pick<ActivityDeps, 'db' | 'temporal' | 'taskQueue'>): Pick<
  Activities,
  | 'askTurn'
  | 'endTurn'
  | 'takeKey'
  | 'freeKey'
  | 'requestTurn'
  | 'readEntity'
  | 'recordEntity'
  | 'storeWaiting'
  | 'takeWaiting'
  | 'eventWorkflowOpen'
  | 'putFirst'
  | 'giveTurns'
> {
  /** How the key's entity starts if it is not running: without `last`, it reads what the database kept of its key. */
  const entityStart = (ask: Pick<TurnAsk, 'flow' | 'source' | 'key' | 'order' | 'coalesce'>, kept?: Pick<EntityInput, 'last' | 'parked'>) => {
    const { flow, source, key, order, coalesce = null } = ask;
    const input: EntityInput = { flow, source, key, order, coalesce: coalesce && coalesceWindow(coalesce), ...kept };
    return {
      workflowId: entityWorkflowId(flow, source, key),
      taskQueue,
      args: [input] as [EntityInput],
      staticSummary: `${source} · ${flow} · ${key}`,
      priority: ENTITY_PRIORITY,
    };
  };
  /** A signal to the key's entity, counted when it fails (its activity retries it): a key whose signals keep failing makes no progress. */
  const signalling = async (flow: string, signal: string, send: () => Promise<unknown>): Promise<void> => {
    try {
      await send();
    } catch (error) {
      // An entity that is gone is waiting for nothing (`tellEntity`).
      if (!(error instanceof WorkflowNotFoundError)) count('entitySignalsFailed', { flow, signal });
      throw error;
    }
  };
  /** Signal-with-start: the request is in the entity's history as soon as the server answers; the turn comes as a signal. */
  const askBySignal = (ask: TurnAsk, start: ReturnType<typeof entityStart>) =>
    signalling(ask.flow, requestTurnSignal.name, () =>
      temporal.workflow.signalWithStart(keyEntityFlow.workflow, { ...start, signal: requestTurnSignal, signalArgs: [ask.request] }),
    );
  /** Hands the key to its entity, started if it is not running: it may give turns now. */
  const giveKey = (ask: TurnAsk, kept?: Pick<EntityInput, 'last' | 'parked'>) =>
    signalling(ask.flow, keyGivenSignal.name, () =>
      temporal.workflow.signalWithStart(keyEntityFlow.workflow, { ...entityStart(ask, kept), signal: keyGivenSignal, signalArgs: [] }),
    );
  const ref = ({ flow, source, key }: TurnAsk) => ({ flow, source, key });
  /**
   * The event holding its key lets it go, recording how it ended, and hands the key to the entity
   * when events wait there or the key parks. Said again once the entity has the key (a repeat, or
   * the event run again by `entities retry` of its failure), it hands the key over again and answers
   * false: the event then tells the entity how it ended, as one the entity gave its turn (the entity
   * takes a second `keyGiven`, or the ending of an event it is not running, as nothing).
   */
  const releaseHeld = async (ask: TurnAsk, entityId: string, ended: { applied?: Applied; parked?: Parked }): Promise<boolean> => {
    const released = await releaseKey(db, ref(ask), { holder: ask.request.workflowId, entityId, ...ended });
    if (released && !released.toEntity) return true;
    if (!released && (await keyHolder(db, ref(ask))) !== entityId) return true;
    await giveKey(ask, released ? { last: released.last, parked: released.parked } : undefined);
    return released !== null;
  };
  /** Tells the key's entity how the event it gave its turn ended (an entity that is gone waits for nothing). */
  const tellEntity = async (entityId: string, done: TurnDone) => {
    try {
      await signalling(entityFlowOf(entityId), turnDoneSignal.name, () => temporal.workflow.getHandle(entityId).signal(turnDoneSignal, done));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  };

  return {
    /**
     * A free key is taken by the event itself, in the same round trip that marks the event as the
     * key's: no entity runs, and the event goes, or is superseded by the version last applied. Any
     * other event (the key held, parked, or coalescing) waits in the entity, asked by
     * signal-with-start: the entity takes a burst of signals in few workflow tasks. A repeat
     * (activity retry, reset) of the holder still holds the key; of another event, asks again, and
     * the entity answers the same.
     */
    async askTurn(ask) {
      const entityId = entityWorkflowId(ask.flow, ask.source, ask.key);
      const claim = await claimKey(db, ask, { eventId: ask.ledgerEventId ?? ask.request.eventId, request: ask.request, mayHold: ask.order !== 'coalesce' });
      if (claim.held) {
        const { go, superseded } = nextTurns(ask.order, [ask.request], claim.last);
        count('turnRequests', { flow: ask.flow, by: 'key' });
        if (go) return { entityId, turn: { go: true, after: claim.last }, held: true };
        // Not newer than the version last applied: it ends at once, and lets the key go.
        await releaseHeld(ask, entityId, {});
        return { entityId, turn: { go: false, after: superseded[0]!.after } };
      }
      await askBySignal(ask, entityStart(ask, { last: claim.last, parked: claim.parked }));
      count('turnRequests', { flow: ask.flow, by: 'entity' });
      return { entityId, turn: null };
    },

    async endTurn({ entityId, done, held }) {
      if (held) {
        const applied = done.failure === null ? { eventId: held.request.eventId, version: held.request.version } : undefined;
        const parked = done.failure === null ? undefined : { ...held.request, failure: done.failure };
        if (await releaseHeld(held, entityId, { applied, parked })) {
          if (applied && held.request.receivedAt) observe('keyLag', Date.now() - Date.parse(held.request.receivedAt), { flow: held.flow });
          return;
        }
      }
      await tellEntity(entityId, done);
    },

    async takeKey({ from, ...keyRef }) {
      return takeKey(db, keyRef, { entityId: entityWorkflowId(keyRef.flow, keyRef.source, keyRef.key), from });
    },

    freeKey: (keyRef) => freeKey(db, keyRef, entityWorkflowId(keyRef.flow, keyRef.source, keyRef.key)),

    async requestTurn(ask) {
      const claim = await claimKey(db, ask, { eventId: ask.ledgerEventId ?? ask.request.eventId, request: ask.request, mayHold: false });
      const start = entityStart(ask, { last: claim.last, parked: claim.parked });
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

    storeWaiting: ({ requests, ...keyRef }) => storeWaiting(db, keyRef, requests),

    takeWaiting: ({ count, take, ...keyRef }) => takeWaiting(db, keyRef, { count, take }),

    eventWorkflowOpen: async (workflowId) => (await workflowState(temporal, workflowId)) === 'running',

    async putFirst(workflowId) {
      try {
        await temporal.workflowService.updateWorkflowExecutionOptions({
          namespace: temporal.options.namespace,
          workflowExecution: { workflowId },
          workflowExecutionOptions: { priority: ENTITY_PRIORITY },
          updateMask: { paths: ['priority'] },
        });
      } catch (error) {
        if (!isNotRunning(error)) throw error;
      }
    },

    async giveTurns(answers) {
      const given: boolean[] = [];
      for (let from = 0; from < answers.length; from += SIGNALS_AT_ONCE) {
        const sent = answers.slice(from, from + SIGNALS_AT_ONCE).map(async ({ workflowId, turn }) => {
          try {
            await temporal.workflow.getHandle(workflowId).signal(turnSignal, turn);
            return true;
          } catch (error) {
            // Its workflow is gone (terminated while it waited): nothing runs for it.
            if (error instanceof WorkflowNotFoundError) return false;
            throw error;
          }
        });
        given.push(...(await Promise.all(sent)));
      }
      return given;
    },
  };
}
