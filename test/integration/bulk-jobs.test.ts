import { randomUUID } from 'node:crypto';
import { checkoutCompleted, type SignedDelivery } from '../support/events';
import { eventually } from '../support/eventually';
import { runCli, spawnNpmScript, type Spawned } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * A bulk retry as a durable job, on the real dev server, PostgreSQL and worker processes: 150 of
 * 200 orders failed (the email API refused them), the cause is fixed, and one job retries the 200
 * by filter, while its worker is killed under it. The 150 complete, the 50 completed ones are
 * skipped, and the stand-ins see one PaymentIntent update and one email per order.
 */
const ADMIN_TOKEN = 'bulk-jobs-test-admin-token-0123456789abcdef';
let stack: WorkerStack;
const workers: Spawned[] = [];
beforeAll(async () => {
  stack = await startStack({ worker: 'external', env: { ADMIN_TOKEN } });
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await stack?.close();
});

async function startWorker(): Promise<Spawned> {
  const worker = spawnNpmScript('worker', stack.workerEnv);
  workers.push(worker);
  await worker.waitFor('worker polling');
  return worker;
}

const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function deliverAll(deliveries: SignedDelivery[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

const outcomes = (deliveries: SignedDelivery[]) =>
  Promise.all(
    deliveries.map((delivery) =>
      stack.client.workflow
        .getHandle(delivery.id)
        .result()
        .then(
          (result) => (result as { outcome: string }).outcome,
          () => 'failed',
        ),
    ),
  );

// Two minutes: 200 workflows, each with a failed run and a reset, on two cores shared with another test file.
it('retries 200 orders by filter as one job, through a worker killed under it: the 150 failed ones complete once, the 50 completed ones are skipped', async () => {
  const worker = await startWorker();
  stack.resend.acceptApiKey('re_not_the_one_in_use');
  const failing = Array.from({ length: 150 }, () => checkoutCompleted());
  await deliverAll(failing);
  expect(new Set(await outcomes(failing))).toEqual(new Set(['failed']));
  stack.resend.acceptApiKey(undefined);
  const fine = Array.from({ length: 50 }, () => checkoutCompleted());
  await deliverAll(fine);
  expect(new Set(await outcomes(fine))).toEqual(new Set(['fulfilled']));

  const filter = { query: `TaskQueue = '${stack.taskQueue}'`, type: 'checkout.*' };
  // Over 100 matches, unconfirmed: a dry run, from the CLI and from /admin alike.
  const dryRun = await runCli(['events', 'retry', '--query', filter.query, '--type', filter.type, '--json'], {
    DATABASE_URL: stack.workerEnv.DATABASE_URL,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  });
  expect(JSON.parse(dryRun.output)).toMatchObject({
    dryRun: true,
    count: 200,
    examples: expect.any(Array),
    reason: expect.stringContaining('confirm with --yes'),
  });
  const unconfirmed = await admin('POST', '/bulk', { action: 'retry', filter, reason: 'email API key fixed' });
  expect([unconfirmed.status, ((await unconfirmed.json()) as { dryRun: boolean }).dryRun]).toEqual([200, true]);

  const started = await admin('POST', '/bulk', { action: 'retry', filter, reason: 'email API key fixed', rate: '50/s', yes: true });
  expect(started.status).toBe(202);
  const { jobId, count } = (await started.json()) as { jobId: string; count: number };
  expect(count).toBe(200);
  const progress = async () =>
    (await (await admin('GET', `/bulk/${encodeURIComponent(jobId)}`)).json()) as {
      status: string;
      state: string;
      done: number;
      skipped: Record<string, number>;
      failed: number;
      total: number;
    };
  await eventually('the job is under way', async () => (await progress()).done >= 30);
  worker.child.kill('SIGKILL');
  await startWorker();
  await eventually('the job ends', async () => (await progress()).status !== 'running', { timeoutMs: 60_000 });
  expect(await progress()).toMatchObject({ status: 'completed', state: 'completed', total: 200, done: 150, skipped: { completed: 50 }, failed: 0 });

  expect(new Set(await outcomes([...failing, ...fine]))).toEqual(new Set(['fulfilled']));
  const ids = new Set([...failing, ...fine].map((delivery) => delivery.id));
  const updates = stack.stripe.requests.filter(
    (request) => request.method === 'POST' && ids.has(request.idempotencyKey?.split(':')[0] ?? '') && !request.replayed,
  );
  expect(updates).toHaveLength(200);
  expect(new Set(updates.map((request) => request.idempotencyKey)).size).toBe(200);
  expect(stack.resend.emails.filter((email) => ids.has(email.idempotencyKey?.split(':')[0] ?? ''))).toHaveLength(200);
  const listed = (await (await admin('GET', '/bulk')).json()) as { jobs: Array<{ jobId: string }> };
  expect(listed.jobs.map((job) => job.jobId)).toContain(jobId);
}, 120_000);

it('finds failed events by their failure class or its last part, and by tenant, from the CLI and /admin, for a bulk action too', async () => {
  await startWorker();
  const tenant = `acct_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  stack.resend.acceptApiKey('re_not_the_one_in_use');
  const failing = Array.from({ length: 3 }, () => checkoutCompleted({ account: tenant }));
  await deliverAll(failing);
  expect(await outcomes(failing)).toEqual(['failed', 'failed', 'failed']);
  stack.resend.acceptApiKey(undefined);
  const fine = [checkoutCompleted({ account: tenant }), checkoutCompleted({ account: 'acct_another_tenant' })];
  await deliverAll(fine);
  expect(await outcomes(fine)).toEqual(['fulfilled', 'fulfilled']);

  // The tenant is set at start, the failure class (whole, and its last part) when the flow fails.
  const failureClass = 'sendEmail › EmailRejected';
  expect((await stack.client.workflow.getHandle(failing[0]!.id).describe()).searchAttributes).toMatchObject({
    WebhookTenant: [tenant],
    WebhookErrorClass: [failureClass, 'EmailRejected'],
  });
  expect((await stack.client.workflow.getHandle(fine[1]!.id).describe()).searchAttributes).toMatchObject({ WebhookTenant: ['acct_another_tenant'] });
  expect((await stack.client.workflow.getHandle(fine[1]!.id).describe()).searchAttributes.WebhookErrorClass).toBeUndefined();

  const cliEnv = { DATABASE_URL: stack.workerEnv.DATABASE_URL, TEMPORAL_TASK_QUEUE: stack.taskQueue };
  const list = async (...args: string[]) => {
    const { code, output, error } = await runCli(['events', 'list', ...args, '--json'], cliEnv);
    expect({ code, error }).toEqual({ code: 0, error: undefined });
    return JSON.parse(output) as Array<{ eventId: string; tenant: string | null; errorClass: string | null }>;
  };
  const ids = (events: Array<{ eventId: string }>) => events.map((event) => event.eventId).sort();
  const failingIds = failing.map((delivery) => delivery.id).sort();
  expect(ids(await list('--tenant', tenant, '--error-class', 'EmailRejected'))).toEqual(failingIds);
  const byClass = await list('--error-class', failureClass, '--tenant', tenant);
  expect(
    byClass
      .map(({ eventId, tenant: listedTenant, errorClass }) => ({ eventId, tenant: listedTenant, errorClass }))
      .sort((a, b) => a.eventId.localeCompare(b.eventId)),
  ).toEqual(failingIds.map((eventId) => ({ eventId, tenant, errorClass: failureClass })));
  expect(ids(await list('--tenant', tenant))).toEqual([...failingIds, fine[0]!.id].sort());
  const fromAdmin = (await (await admin('GET', `/events?tenant=${tenant}&errorClass=${encodeURIComponent(failureClass)}`)).json()) as {
    events: Array<{ eventId: string }>;
  };
  expect(ids(fromAdmin.events)).toEqual(failingIds);

  const dryRun = await runCli(['events', 'retry', '--error-class', 'EmailRejected', '--tenant', tenant, '--dry-run', '--json'], cliEnv);
  expect(JSON.parse(dryRun.output)).toMatchObject({ dryRun: true, count: 3 });
  const refused = await admin('GET', `/events?errorClass=${encodeURIComponent("EmailRejected' OR 'a' = 'a")}`);
  expect([refused.status, ((await refused.json()) as { detail: string }).detail]).toEqual([
    400,
    '"errorClass" may hold letters, digits and . _ : @ - › and spaces only.',
  ]);
}, 60_000);

it('acts on what the operator confirmed after a dry run, at most that many, not on what matches by the time the job runs', async () => {
  if (workers.length === 0) await startWorker();
  const tenant = `acct_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const fail = async (count: number) => {
    stack.resend.acceptApiKey('re_not_the_one_in_use');
    const failing = Array.from({ length: count }, () => checkoutCompleted({ account: tenant }));
    await deliverAll(failing);
    expect(await outcomes(failing)).toEqual(Array(count).fill('failed'));
    stack.resend.acceptApiKey(undefined);
    return failing;
  };
  const request = { action: 'retry', filter: { tenant, status: 'failed' }, reason: 'the email key is fixed' };
  const dryRunOf = async () =>
    (await (await admin('POST', '/bulk', { ...request, dryRun: true })).json()) as { count: number; confirm: { count: number; until: string } };
  const confirmedOnes = await fail(2);
  // Visibility indexes a failure a moment after the workflow ends.
  let dryRun = await dryRunOf();
  await eventually('both failures are listed', async () => (dryRun = await dryRunOf()).count === 2);
  expect(dryRun).toMatchObject({ count: 2, confirm: { count: 2, until: expect.any(String) } });

  // Another failure of the same filter after the dry run, listed by now: not confirmed, not retried.
  const later = await fail(1);
  await eventually('the later failure is listed too', async () => (await dryRunOf()).count === 3);
  const started = await admin('POST', '/bulk', { ...request, confirm: dryRun.confirm });
  expect(started.status).toBe(202);
  const { jobId, count } = (await started.json()) as { jobId: string; count: number };
  expect(count).toBe(2);
  await eventually(
    'the job completed',
    async () => ((await (await admin('GET', `/bulk/${encodeURIComponent(jobId)}`)).json()) as { status: string }).status === 'completed',
  );
  expect(await (await admin('GET', `/bulk/${encodeURIComponent(jobId)}`)).json()).toMatchObject({ total: 2, done: 2 });
  expect(await outcomes(confirmedOnes)).toEqual(['fulfilled', 'fulfilled']);
  expect((await stack.client.workflow.getHandle(later[0]!.id).describe()).status.name).toBe('FAILED');
}, 60_000);
