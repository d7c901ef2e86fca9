import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReconcileActivities } from '../../activities/reconcile';
import { loadCommonConfig } from '../../src/config';
import type { StripeEvent } from '../../src/dev/stripe-objects';
import { startStripeStandIn } from '../../src/dev/stripe-stand-in';
import type { ReconcileStatus } from '../../src/temporal/schedules';
import { eventually } from '../support/eventually';
import { checkoutCompleted } from '../support/events';
import { startGitHubStandIn } from '../support/github-stand-in';
import { startPaddleStandIn } from '../support/paddle-stand-in';
import { runCli, spawnTs, type Spawned } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';
import { INTERNAL_WORKFLOW_ID_PREFIX } from '../../contracts';
import { fulfilCheckoutFlow, reconcile } from '../../workflows';

/**
 * Scheduled reconciliation: `durable-webhooks reconcile enable` makes a Temporal Schedule on the dev
 * server whose runs (the `reconcile` workflow, on the test's worker) list the Stripe and GitHub
 * stand-ins and start what never arrived, once.
 */
const GITHUB_TOKEN = 'ghp_reconcile_test';
const HOOK = 'repos/octo/shop/hooks/9';
let stack: WorkerStack;
let github: Awaited<ReturnType<typeof startGitHubStandIn>>;
const PADDLE_API_KEY = 'pdl_live_apikey_reconcile_test';
let paddle: Awaited<ReturnType<typeof startPaddleStandIn>>;
beforeAll(async () => {
  github = await startGitHubStandIn({ token: GITHUB_TOKEN });
  paddle = await startPaddleStandIn({ apiKey: PADDLE_API_KEY });
  stack = await startStack({ env: { GITHUB_TOKEN, GITHUB_API_URL: github.url, GITHUB_HOOKS: HOOK, PADDLE_API_KEY, PADDLE_API_URL: paddle.url } });
});
afterAll(async () => {
  for (const provider of ['stripe', 'github', 'paddle']) await runCli(['reconcile', 'disable', provider], env());
  await stack?.close();
  await github?.close();
  await paddle?.close();
});

const env = () => ({ TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: stack.taskQueue });
const cliJson = async <T>(...args: string[]): Promise<T> => {
  const { code, output } = await runCli([...args, '--json'], env());
  expect({ code, output }).toMatchObject({ code: 0 });
  return JSON.parse(output) as T;
};
const eventOf = (type: string): StripeEvent => ({
  ...(JSON.parse(checkoutCompleted().body) as StripeEvent),
  type,
  created: Math.floor(Date.now() / 1000) - 60,
});

it('a Stripe schedule starts every missed event once, leaves what arrived by webhook, and reports its runs', async () => {
  const missed = Array.from({ length: 30 }, () => eventOf('checkout.session.completed'));
  const delivered = checkoutCompleted();
  expect((await post(`${stack.url}/webhooks/stripe`, delivered.headers, delivered.body)).status).toBe(202);
  stack.stripe.addEvents(...missed, JSON.parse(delivered.body) as StripeEvent);

  const enabled = await cliJson<ReconcileStatus>('reconcile', 'enable', 'stripe', '--every', '2s', '--lookback', '1h');
  expect(enabled).toMatchObject({ provider: 'stripe', scheduleId: 'reconcile-stripe', enabled: true, everyMs: 2000, lookbackMs: 3_600_000 });

  const completedRuns = async () => (await cliJson<ReconcileStatus[]>('reconcile', 'status'))[0]!.runs.filter((run) => run.counts);
  await eventually('a reconciliation run completes', async () => (await completedRuns()).length > 0, { timeoutMs: 60_000, intervalMs: 500 });
  const [first] = (await completedRuns()).slice(-1);
  expect(first!.counts).toEqual({ found: 31, alreadyRecorded: 1, started: 30, failed: 0 });
  for (const event of missed) {
    const handle = stack.client.workflow.getHandle(event.id);
    expect(await handle.result()).toMatchObject({ outcome: 'fulfilled' });
    expect((await handle.describe()).searchAttributes).toMatchObject({ WebhookVia: ['backfill'] });
  }
  expect((await stack.client.workflow.getHandle(delivered.id).describe()).searchAttributes).toMatchObject({ WebhookVia: ['delivery'] });

  // Later runs find everything recorded; nothing is processed twice.
  await eventually('a second run completes', async () => (await completedRuns()).length > 1, { timeoutMs: 60_000, intervalMs: 500 });
  expect((await completedRuns())[0]!.counts).toMatchObject({ started: 0, failed: 0 });
  const ours = [...missed.map((event) => event.id), delivered.id];
  expect(stack.resend.emails.filter((email) => ours.includes(email.idempotencyKey!))).toHaveLength(31);

  expect((await runCli(['reconcile', 'disable', 'stripe'], env())).code).toBe(0);
  expect((await cliJson<ReconcileStatus[]>('reconcile', 'status'))[0]).toMatchObject({ provider: 'stripe', enabled: false, everyMs: null });
  expect(await runCli(['reconcile', 'disable', 'stripe'], env())).toMatchObject({
    code: 1,
    error: expect.stringContaining('Reconciliation from stripe is not enabled.'),
  });
});

it("a GitHub schedule starts a missed delivery with the worker's GitHub settings", async () => {
  const guid = github.addDelivery(HOOK, {
    event: 'issues',
    payload: { action: 'opened', issue: { number: 3, title: `reconciled ${randomUUID()}` }, repository: { full_name: 'octo/shop' } },
  });
  await cliJson('reconcile', 'enable', 'github', '--every', '2s', '--lookback', '1h');
  await eventually(
    'the missed delivery is started',
    () =>
      stack.client.workflow
        .getHandle(guid)
        .describe()
        .then(
          () => true,
          () => false,
        ),
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  expect(await stack.client.workflow.getHandle(guid).result()).toMatchObject({ outcome: 'notified', type: 'issues.opened' });
});

it("a Paddle schedule starts a missed event with the worker's Paddle settings", async () => {
  const event = {
    event_id: `evt_${Date.now()}${randomUUID().slice(0, 8)}`,
    event_type: 'transaction.completed',
    occurred_at: new Date().toISOString(),
    data: { id: 'txn_reconciled' },
  };
  paddle.addEvents(event);
  await cliJson('reconcile', 'enable', 'paddle', '--every', '2s', '--lookback', '1h');
  await eventually(
    'the missed event is started',
    () =>
      stack.client.workflow
        .getHandle(event.event_id)
        .describe()
        .then(
          () => true,
          () => false,
        ),
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  expect(await stack.client.workflow.getHandle(event.event_id).result()).toMatchObject({ source: 'paddle', type: 'transaction.completed' });
  expect((await stack.client.workflow.getHandle(event.event_id).describe()).searchAttributes).toMatchObject({ WebhookVia: ['backfill'] });
});

it('an attempt retried after a crash resumes after the last event it settled, adding to its counts', async () => {
  // A Stripe of its own, so the listing holds these five events only.
  const stripe = await startStripeStandIn();
  const events = Array.from({ length: 5 }, (_, index) => ({ ...eventOf('customer.updated'), created: Math.floor(Date.now() / 1000) - 10 - index }));
  stripe.addEvents(...events);
  const config = { ...loadCommonConfig(env()), stripe: { secretKey: 'sk_test_stand_in', apiUrl: stripe.url } };
  const { reconcileProvider } = createReconcileActivities({ db: stack.db, temporal: stack.client, config });
  // The crashed attempt had settled the two newest (found 2, started 2).
  const resumed = new MockActivityEnvironment({
    heartbeatDetails: { counts: { found: 2, alreadyRecorded: 0, started: 2, failed: 0 }, lastSettled: events[1]!.id },
  });
  const heartbeats: unknown[] = [];
  resumed.on('heartbeat', (details: unknown) => heartbeats.push(details));
  const counts = await resumed.run(reconcileProvider, { provider: 'stripe' as const, since: new Date(Date.now() - 60_000).toISOString() });
  await stripe.close();

  expect(counts).toEqual({ found: 5, alreadyRecorded: 0, started: 5, failed: 0 });
  expect(heartbeats.at(-1)).toEqual({ counts, lastSettled: events[4]!.id });
  for (const event of events.slice(0, 2)) await expect(stack.client.workflow.getHandle(event.id).describe()).rejects.toThrow();
  for (const event of events.slice(2))
    expect((await stack.client.workflow.getHandle(event.id).describe()).searchAttributes).toMatchObject({ WebhookVia: ['backfill'] });
});

describe('a run whose worker is killed mid-listing', () => {
  let crashStack: WorkerStack;
  let worker: Spawned | undefined;
  beforeAll(async () => {
    crashStack = await startStack({ worker: 'external' });
  });
  afterAll(async () => {
    worker?.child.kill('SIGKILL');
    await crashStack?.close();
  });
  const startWorkerProcess = async () => {
    const started = spawnTs('src/worker.ts', [], crashStack.workerEnv);
    await started.waitFor('worker polling');
    return started;
  };

  it('resumes on another worker and starts every missing event once', async () => {
    const events = Array.from({ length: 150 }, (_, index) => ({
      ...eventOf('checkout.session.completed'),
      created: Math.floor(Date.now() / 1000) - 30 - index,
    }));
    crashStack.stripe.addEvents(...events);
    worker = await startWorkerProcess();
    const held = crashStack.stripe.holdNext('listing');

    const run = await crashStack.client.workflow.start(reconcile, {
      workflowId: `${INTERNAL_WORKFLOW_ID_PREFIX}reconcile-crash-${randomUUID()}`,
      taskQueue: crashStack.taskQueue,
      args: [{ provider: 'stripe', lookbackMs: 3_600_000 }],
    });
    // The first page (100 events) is settled and the second page is being listed: kill the worker.
    const release = await held;
    worker.child.kill('SIGKILL');
    await worker.exited;
    release();
    worker = await startWorkerProcess();

    const counts = await run.result();
    console.log(`reconcile after a worker crash: ${JSON.stringify(counts)}`);
    expect(counts.failed).toBe(0);
    expect(counts.found).toBe(counts.alreadyRecorded + counts.started);
    expect(counts.found).toBeGreaterThanOrEqual(150);
    // One run per event (one visibility query for all of them), and one confirmation email each.
    const ids = new Set(events.map((event) => event.id));
    await eventually('every event is fulfilled', () => crashStack.resend.emails.filter((email) => ids.has(email.idempotencyKey!)).length >= 150, {
      timeoutMs: 60_000,
    });
    const runs = new Map<string, number>();
    for await (const execution of crashStack.client.workflow.list({
      query: `TaskQueue = '${crashStack.taskQueue}' AND WorkflowType = '${fulfilCheckoutFlow.name}'`,
    })) {
      runs.set(execution.workflowId, (runs.get(execution.workflowId) ?? 0) + 1);
    }
    expect(events.map((event) => runs.get(event.id))).toEqual(Array(150).fill(1));
    expect(crashStack.resend.emails.filter((email) => ids.has(email.idempotencyKey!))).toHaveLength(150);
    expect((await crashStack.client.workflow.getHandle(run.workflowId).describe()).raw.pendingActivities ?? []).toEqual([]);
  }, 180_000);
});
