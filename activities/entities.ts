import { WorkflowNotFoundError } from '@temporalio/client';
import { entityWorkflowId, requestTurnSignal, type Activities } from '../contracts';
import { keyEntityFlow } from '../src/flows';
import { entityRecord, recordApplied, recordParked } from '../src/db/entities';
import type { ActivityDeps } from './index';
import { observe } from './metrics';

/** The activities of keyed flows' turns (workflows/entity.ts, workflows/turns.ts). */
export function createEntityActivities({
  db,
  temporal,
  taskQueue,
}: Pick<ActivityDeps, 'db' | 'temporal' | 'taskQueue'>): Pick<Activities, 'requestTurn' | 'recordEntity' | 'eventWorkflowOpen'> {
  return {
    /**
     * Signal-with-start: the entity runs, or starts from the last event the database says was
     * applied. A repeat (activity retry, reset) asks again, which the entity answers with the same turn.
     */
    async requestTurn({ flow, source, key, order, request }) {
      const workflowId = entityWorkflowId(flow, source, key);
      const record = await entityRecord(db, { flow, source, key });
      await temporal.workflow.signalWithStart(keyEntityFlow.workflow, {
        workflowId,
        taskQueue,
        args: [{ flow, source, key, order, last: record?.last ?? null, ...(record?.parked && { parked: record.parked }) }],
        signal: requestTurnSignal,
        signalArgs: [request],
        staticSummary: `${source} · ${flow} · ${key}`,
      });
      return workflowId;
    },

    async recordEntity({ applied, receivedAt, parked, ...ref }) {
      if (applied) await recordApplied(db, ref, applied);
      if (applied && receivedAt) observe('keyLag', Date.now() - Date.parse(receivedAt), { flow: ref.flow });
      if (parked !== undefined) await recordParked(db, ref, parked);
    },

    async eventWorkflowOpen(workflowId) {
      try {
        return (await temporal.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}
