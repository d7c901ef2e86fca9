import { isGrpcServiceError, NamespaceNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';

// A failed call with one of these codes means Temporal was not reached or did not answer in time.
const UNAVAILABLE_CODES = new Set<number>([grpcStatus.UNAVAILABLE, grpcStatus.DEADLINE_EXCEEDED, grpcStatus.CANCELLED, grpcStatus.RESOURCE_EXHAUSTED]);

/** True when a call failed because Temporal was not reached or did not answer: it recorded nothing, and a retry is the answer. */
export function isUnavailable(error: unknown): boolean {
  for (let current = error; current; current = (current as { cause?: unknown }).cause) {
    // A restarted cluster answers this until it has loaded its namespaces; a wrong TEMPORAL_NAMESPACE
    // too, which /readyz reports.
    if (current instanceof NamespaceNotFoundError) return true;
    if (isGrpcServiceError(current) && UNAVAILABLE_CODES.has(current.code)) return true;
  }
  return false;
}

/** True when a call on one workflow failed because it does not run: closed, or not retained (gRPC's not found). */
export function isNotRunning(error: unknown): boolean {
  return error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && error.code === grpcStatus.NOT_FOUND);
}

/** Whether Temporal runs the workflow with this ID now, has it closed within retention, or has none. */
export async function workflowState(client: Client, workflowId: string): Promise<'running' | 'closed' | 'not retained'> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING' ? 'running' : 'closed';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'not retained';
    throw error;
  }
}

/** True when Temporal has a workflow with this ID, running or closed within retention. */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  return (await workflowState(client, workflowId)) !== 'not retained';
}
