import { status as grpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { INTERNAL_WORKFLOW_ID_PREFIX } from '../../contracts';
import { buildCheckFlow } from '../flows';
import type { WorkerDeployment } from '../config/worker';

/** What `promoteBuild` did. */
export interface Promotion {
  deployment: string;
  buildId: string;
  /** The build that was current before, or null when unversioned workers were. */
  previous: string | null;
}

/** The workflow `workers promote` runs on a build before making it current. */
export const buildCheckWorkflowId = (target: WorkerDeployment) => `${INTERNAL_WORKFLOW_ID_PREFIX}build-check:${target.name}.${target.buildId}`;

/**
 * Makes `buildId` the current build of its Worker Deployment once it has shown it works: its workers
 * poll `taskQueue` for workflow tasks (Temporal lists the task queue under the version: knowing the
 * version is not enough, a start pinned to it is refused until then), and a `buildCheck` workflow
 * pinned to it completes (its workflow code loads and completes a task, its worker runs an
 * activity). A build that polls and fails its
 * workflow tasks is never made current. Both are waited for until `waitMs` has passed, then the check
 * is terminated and the promotion refused, naming why. What a Helm install's, upgrade's and
 * rollback's hook runs (docs/deploys.md); making a build current that already is changes nothing.
 */
export async function promoteBuild(
  client: Client,
  target: WorkerDeployment,
  { waitMs, taskQueue, intervalMs = 2_000 }: { waitMs: number; taskQueue: string; intervalMs?: number },
): Promise<Promotion> {
  const deadline = Date.now() + waitMs;
  const version = { deploymentName: target.name, buildId: target.buildId };
  await retryUntil(deadline, intervalMs, async () => {
    try {
      const described = await client.workflowService.describeWorkerDeploymentVersion({ namespace: client.options.namespace, deploymentVersion: version });
      return pollsWorkflowTasks(described, taskQueue);
    } catch (error) {
      if (notPollingYet(error)) return false;
      throw error;
    }
  }).catch((error: unknown) => {
    throw new Error(
      `build ${target.buildId} of the worker deployment ${target.name} has no worker polling the task queue ${taskQueue} after ${Math.round(waitMs / 1000)} s (are its workers running, with WORKER_BUILD_ID=${target.buildId}?)`,
      { cause: error },
    );
  });

  await checkBuild(client, target, { taskQueue, deadline, waitMs });

  // What was current is read before the change, not from its answer: a call retried after it took
  // effect (by the client, or by the server's own deployment workflow) answers this build.
  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: target.name });
  await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: target.name,
    buildId: target.buildId,
    identity: client.options.identity,
  });
  return { deployment: target.name, buildId: target.buildId, previous: workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || null };
}

/** Runs `buildCheck` pinned to the build and waits for it to complete by `deadline`. */
async function checkBuild(
  client: Client,
  target: WorkerDeployment,
  { taskQueue, deadline, waitMs }: { taskQueue: string; deadline: number; waitMs: number },
): Promise<void> {
  const handle = await client.workflow.start(buildCheckFlow.workflow, {
    workflowId: buildCheckWorkflowId(target),
    taskQueue,
    // A check of this build still running (an earlier promote's) is this one's too; a finished one is run again.
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    versioningOverride: { pinnedTo: { deploymentName: target.name, buildId: target.buildId } },
    // Terminated when the wait ends; this ends it too should the promoting process die first.
    workflowExecutionTimeout: Math.max(deadline - Date.now(), 0) + 60_000,
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), Math.max(deadline - Date.now(), 0))));
  const outcome = await Promise.race([
    handle.result().then(
      () => 'completed' as const,
      (error: unknown) => error,
    ),
    timedOut,
  ]).finally(() => clearTimeout(timer));
  if (outcome === 'completed') return;
  const why = await lastWorkflowTaskFailure(client, handle.workflowId);
  await handle.terminate('workers promote: the build did not pass its check').catch(() => undefined);
  throw new Error(
    `build ${target.buildId} of the worker deployment ${target.name} polls but did not complete the check workflow ${handle.workflowId} within ${Math.round(waitMs / 1000)} s` +
      (why ? `: its workflow task failed: ${why}` : '; its workers take no task (are they stuck, or out of capacity?)') +
      '. It is not made current.',
    { cause: outcome === 'timed out' ? undefined : outcome },
  );
}

/** The message of the last failed workflow task in the workflow's history, if any. */
async function lastWorkflowTaskFailure(client: Client, workflowId: string): Promise<string | undefined> {
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const failed = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes);
    return failed.at(-1)?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
  } catch {
    return undefined;
  }
}

/** True when the version lists `taskQueue` as one its workers poll for workflow tasks. */
export function pollsWorkflowTasks(described: temporal.api.workflowservice.v1.IDescribeWorkerDeploymentVersionResponse, taskQueue: string): boolean {
  const queues = [...(described.versionTaskQueues ?? []), ...(described.workerDeploymentVersionInfo?.taskQueueInfos ?? [])];
  return queues.some((queue) => queue.name === taskQueue && queue.type === temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW);
}

/** Calls `ready` every `intervalMs` until it says true; rejects once `deadline` has passed without. */
async function retryUntil(deadline: number, intervalMs: number, ready: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await ready()) return;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error('not ready in time');
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remaining)));
  }
}

/** Temporal's answer while no worker of the build (or of the deployment) has polled: not found, or a failed precondition. */
function notPollingYet(error: unknown): boolean {
  return isGrpcServiceError(error) && (error.code === grpcStatus.NOT_FOUND || error.code === grpcStatus.FAILED_PRECONDITION);
}
