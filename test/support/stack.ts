import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type Worker, type WorkflowBundle } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/logger';
import { startReceiver } from '../../src/receiver';
import { createWorker, WORKFLOWS_PATH } from '../../src/temporal/worker';
import { SECRETS } from './signing';

/** The signing secrets every test stack is configured with (two of each, for rotation). */
export const SECRETS_ENV = {
  STRIPE_WEBHOOK_SECRET: `${SECRETS.stripe} ${SECRETS.stripeRotated}`,
  GITHUB_WEBHOOK_SECRET: `${SECRETS.github},${SECRETS.githubRotated}`,
  STANDARD_WEBHOOK_SECRET: `${SECRETS.standard} ${SECRETS.standardRotated}`,
};

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow bundle, built once per test file. */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } });
  return bundle;
}

export interface Stack {
  url: string;
  client: Client;
  taskQueue: string;
  close(): Promise<void>;
}

/**
 * The receiver on a free port, with a real client to the suite's Temporal dev server and (unless
 * `worker: false`) a real worker, both on a task queue of the test's own.
 */
export async function startStack(options: { env?: NodeJS.ProcessEnv; worker?: boolean; address?: string } = {}): Promise<Stack> {
  const address = options.address ?? process.env.TEMPORAL_ADDRESS!;
  const taskQueue = `test-${randomUUID()}`;
  const config = loadConfig({ ...SECRETS_ENV, PORT: '0', TEMPORAL_TASK_QUEUE: taskQueue, ...options.env });
  const client = new Client({ connection: Connection.lazy({ address }), namespace: 'default' });
  const receiver = await startReceiver(config, client, silentLogger);

  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  if (options.worker !== false) {
    workerConnection = await NativeConnection.connect({ address });
    worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, workflowBundle: await workflowBundle() });
    running = worker.run();
  }

  return {
    url: receiver.url,
    client,
    taskQueue,
    async close() {
      await receiver.close();
      worker?.shutdown();
      await running;
      await workerConnection?.close();
      await client.connection.close();
    },
  };
}

/** True when Temporal has a workflow with this ID (in any state). */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** Every run Temporal's visibility holds for this workflow ID. */
export async function runsOf(client: Client, workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution.runId);
  return runs;
}

export async function post(url: string, headers: Record<string, string>, body: string | Buffer) {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** A port nothing listens on now (and, with `plus`, the port that far above it too). */
export async function freePort(plus?: number): Promise<number> {
  for (;;) {
    const port = await listenOnce(0);
    if (plus === undefined || (await listenOnce(port + plus).then(() => true, () => false))) return port;
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
