import { Worker, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Activities } from '../../activities';

/** The workflow bundle's entry, resolved the same way from `src/` (tsx, Jest) and from `dist/`. */
export const WORKFLOWS_PATH = require.resolve('../../workflows');

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  /** A prebuilt bundle (tests build one per file); otherwise the worker bundles `workflows/` itself. */
  workflowBundle?: WorkflowBundle;
}

export function createWorker({ connection, namespace, taskQueue, activities, workflowBundle }: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities,
  });
}
