import { status as grpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { WorkerDeployment } from '../config';

/** What `promoteBuild` did. */
export interface Promotion {
  deployment: string;
  buildId: string;
  /** The build that was current before, or null when unversioned workers were. */
  previous: string | null;
}

/**
 * Makes `buildId` the current build of its Worker Deployment, once its workers poll: Temporal refuses
 * a build no worker of it has polled yet (or a deployment it has not seen), so the refusal is tried
 * again every `intervalMs` until `waitMs` has passed. What a Helm upgrade's hook runs after the new
 * workers start (docs/deploys.md); making a build current that already is changes nothing.
 */
export async function promoteBuild(client: Client, target: WorkerDeployment, { waitMs, intervalMs = 2_000 }: { waitMs: number; intervalMs?: number }): Promise<Promotion> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const response = await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: target.name,
        buildId: target.buildId,
        identity: client.options.identity,
      });
      return { deployment: target.name, buildId: target.buildId, previous: response.previousDeploymentVersion?.buildId || null };
    } catch (error) {
      if (!notPollingYet(error)) throw error;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new Error(`build ${target.buildId} of the worker deployment ${target.name} has no worker polling after ${Math.round(waitMs / 1000)} s (are its workers running, with WORKER_BUILD_ID=${target.buildId}?)`, {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remaining)));
    }
  }
}

/** Temporal's answer while no worker of the build (or of the deployment) has polled: not found, or a failed precondition. */
function notPollingYet(error: unknown): error is { details: string } {
  return isGrpcServiceError(error) && (error.code === grpcStatus.NOT_FOUND || error.code === grpcStatus.FAILED_PRECONDITION);
}
