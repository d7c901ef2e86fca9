import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

/**
 * Resets a workflow to the end of its first workflow task, as `temporal workflow reset --type
 * FirstWorkflowTask` does: the new run keeps the run chain (and so its ledger claim) and replays
 * every step, which finds its ledger rows and idempotency keys and repeats no side effect.
 * The TypeScript client has no reset method, so this calls the service directly.
 * @returns the new run's ID
 */
export async function resetToFirstWorkflowTask(client: Client, workflowId: string, reason: string): Promise<string> {
  const namespace = client.options.namespace;
  const { history } = await client.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId } });
  const firstTaskCompleted = history?.events?.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  if (!firstTaskCompleted?.eventId) throw new Error(`Workflow ${workflowId} has no completed workflow task to reset to.`);
  const { runId } = await client.workflowService.resetWorkflowExecution({
    namespace,
    workflowExecution: { workflowId },
    reason,
    workflowTaskFinishEventId: firstTaskCompleted.eventId,
    requestId: randomUUID(),
  });
  return runId!;
}
