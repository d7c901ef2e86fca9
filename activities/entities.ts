import { entityWorkflowId, requestTurnSignal, type Activities } from '../contracts';
import { keyEntityFlow } from '../src/flows';
import { entityRecord, recordApplied, recordKeyed, recordParked } from '../src/db/entities';
import { workflowState } from '../src/temporal/availability';
import { coalesceWindow } from '../src/flows';
import type { ActivityDeps } from './index';
import { observe } from './metrics';

/** The activities of keyed flows' turns (workflows/entity.ts, workflows/turns.ts). */
export function createEntityActivities({
  db,
  temporal,
  taskQueue,
}: Pick<ActivityDeps, 'db' | 'temporal' | 'taskQueue'>): Pick<Activities, 'requestTurn' | 'readEntity' | 'recordEntity' | 'eventWorkflowOpen'> {
  return {
    /**
     * Signal-with-start: the entity runs, or starts (and reads what the database kept of its key). A
     * repeat (activity retry, reset) asks again, which the entity answers with the same turn.
     */
    async requestTurn({ flow, source, key, order, coalesce = null, request }) {
      const workflowId = entityWorkflowId(flow, source, key);
      await recordKeyed(db, { flow, source, key }, request.eventId);
      await temporal.workflow.signalWithStart(keyEntityFlow.workflow, {
        workflowId,
        taskQueue,
        args: [{ flow, source, key, order, coalesce: coalesce && coalesceWindow(coalesce) }],
        signal: requestTurnSignal,
        signalArgs: [request],
        staticSummary: `${source} · ${flow} · ${key}`,
      });
      return workflowId;
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
