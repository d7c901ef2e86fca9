import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { loadReceiverConfig, loadWorkerConfig } from '../../src/config';
import type { Database } from '../../src/db/database';
import { silentLogger } from '../../src/core/logger';
import { startReceiver } from '../../src/receiver';
import { createWorkerServices, type WorkerServices } from '../../src/services';
import { startWorker, WORKFLOW_BUNDLE_PATH, WORKFLOWS_PATH, type RunningWorker } from '../../src/temporal/worker';
import { temporalSettings } from '../../src/temporal/connection';
import { distIsFresh } from './build';
import { createTestDatabase, openTestDatabase } from './database';
import { eventually } from './eventually';
import { startResendStandIn, type ResendStandIn } from './resend-stand-in';
import { SECRETS_ENV } from './signing';
import { startStripeStandIn, type StripeStandIn } from '../../src/dev/stripe-stand-in';

let bundle: Promise<WorkflowBundle> | undefined;
/**
 * The workflow bundle of a worker that does not trace: the one `npm run build` wrote, when dist/ is
 * built from the sources as they are (as under `npm test`), else built once per test file.
 */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= distIsFresh()
    ? readFile(WORKFLOW_BUNDLE_PATH, 'utf8').then((code) => ({ code }))
    : bundleWorkflowCode({
        workflowsPath: WORKFLOWS_PATH,
        logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
      });
  return bundle;
}

export interface Stack {
  url: string;
  /** The receiver's `/metrics`, on its own port. */
  metricsUrl: string;
  client: Client;
  taskQueue: string;
  close(): Promise<void>;
}

/** A stack with a worker: its database and the Stripe and Resend stand-ins it talks to. */
export interface WorkerStack extends Stack {
  db: Database;
  stripe: StripeStandIn;
  resend: ResendStandIn;
  /** The worker's environment, for starting another worker process on the same stack. */
  workerEnv: Record<string, string>;
}

export function startStack(options: { env?: NodeJS.ProcessEnv; address?: string; worker: false }): Promise<Stack>;
export function startStack(options?: { env?: NodeJS.ProcessEnv; address?: string; worker?: true | 'external' }): Promise<WorkerStack>;
/**
 * The receiver on a free port with a real client to the suite's Temporal dev server, on a task
 * queue of the test's own; unless `worker: false`, also a real worker with a fresh PostgreSQL
 * database, the Stripe stand-in and the Resend stand-in. With `worker: 'external'` everything but
 * the worker itself is there, for a test that runs the worker as a process (`workerEnv`).
 */
export async function startStack(options: { env?: NodeJS.ProcessEnv; address?: string; worker?: boolean | 'external' } = {}): Promise<Stack | WorkerStack> {
  const address = options.address ?? process.env.TEMPORAL_ADDRESS!;
  const taskQueue = `test-${randomUUID()}`;
  const config = loadReceiverConfig(
    { ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '127.0.0.1:0', TEMPORAL_TASK_QUEUE: taskQueue, ...options.env },
    { development: true },
  );
  // Temporal's own settings from the test's environment: PAYLOAD_ENCRYPTION_KEYS turns the codec on.
  const { dataConverter } = temporalSettings({ TEMPORAL_ADDRESS: address, ...options.env });
  const client = new Client({ connection: Connection.lazy({ address }), namespace: 'default', dataConverter });
  if (options.worker === false) {
    const db = await openTestDatabase();
    const receiver = await startReceiver(config, client, silentLogger, db, dataConverter?.payloadCodecs?.[0]);
    return {
      url: receiver.url,
      metricsUrl: receiver.metricsUrl!,
      client,
      taskQueue,
      async close() {
        await receiver.close();
        await client.connection.close();
        await db.drop();
      },
    };
  }

  const database = await createTestDatabase();
  const stripe = await startStripeStandIn();
  const resend = await startResendStandIn();
  const workerEnv = {
    DATABASE_URL: database.url,
    STRIPE_SECRET_KEY: 'sk_test_stand_in',
    STRIPE_API_URL: stripe.url,
    EMAIL_PROVIDER: 'resend',
    RESEND_API_KEY: 're_test_stand_in',
    RESEND_BASE_URL: resend.url,
    NOTIFY_EMAIL: 'ops@example.com',
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'dw-stack-')),
    // A worker process started on this stack serves no metrics unless a test gives it an address.
    WORKER_METRICS_ADDRESS: '',
    ...(options.env as Record<string, string>),
  };
  const services: WorkerServices = await createWorkerServices(loadWorkerConfig(workerEnv, { development: true }), { temporal: client });
  const worker: RunningWorker | undefined =
    options.worker === 'external'
      ? undefined
      : await startWorker({
          settings: temporalSettings(workerEnv, { worker: true }),
          taskQueue,
          activities: services.activities,
          workflows: await workflowBundle(),
          bodyStore: services.db,
        });
  // The receiver reads the same Stripe settings (its /admin backfill lists the stand-in's events).
  const receiverConfig = { ...config, stripe: { secretKey: workerEnv.STRIPE_SECRET_KEY, apiUrl: workerEnv.STRIPE_API_URL } };
  const receiver = await startReceiver(receiverConfig, client, silentLogger, services.db, dataConverter?.payloadCodecs?.[0]);

  return {
    url: receiver.url,
    metricsUrl: receiver.metricsUrl!,
    client,
    taskQueue,
    db: services.db,
    stripe,
    resend,
    workerEnv,
    async close() {
      await worker?.shutdown();
      await receiver.close();
      await client.connection.close();
      await services.close();
      await stripe.close();
      await resend.close();
      await database.drop();
    },
  };
}

/**
 * A workflow's result once it exists: with ACKNOWLEDGE=database (production's default) a delivery is
 * answered before its workflow starts, so a handle taken right after the answer may find none yet.
 */
export async function resultOnceStarted(client: Client, workflowId: string, timeoutMs = 30_000): Promise<unknown> {
  const handle = client.workflow.getHandle(workflowId);
  await eventually(
    `${workflowId} is started`,
    () =>
      handle.describe().then(
        () => true,
        () => false,
      ),
    { timeoutMs },
  );
  return handle.result();
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
