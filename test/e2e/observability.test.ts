import { randomUUID } from 'node:crypto';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-stand-in';
import { checkoutCompleted, orderCreated } from '../support/events';
import { freePort } from '../support/ports';
import { spawnNpmScript, type Spawned } from '../support/processes';
import { SECRETS, SECRETS_ENV, stripeHeaders } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * `npm run receiver` and `npm run worker` as production runs them, through a few flows: every line
 * either writes is one JSON object with our field names and nothing from a payload, a signature or
 * a secret; the worker serves the SDK's Prometheus metrics with our business counters beside them;
 * each workflow tells the UI where it stands (current details).
 */
const MARKER = `observability-marker-${randomUUID()}`;
let stack: WorkerStack;
let receiver: Spawned;
let worker: Spawned;
let receiverUrl: string;
let metricsUrl: string;

beforeAll(async () => {
  stack = await startStack({ worker: 'external' });
  const receiverPort = await freePort();
  const metricsPort = await freePort();
  receiverUrl = `http://localhost:${receiverPort}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  worker = spawnNpmScript('worker', { ...stack.workerEnv, NODE_ENV: undefined, WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
  receiver = spawnNpmScript('receiver', { ...stack.workerEnv, ...SECRETS_ENV, NODE_ENV: undefined, PORT: String(receiverPort) });
  await Promise.all([worker.waitFor('worker polling'), receiver.waitFor('receiver listening')]);
});

afterAll(async () => {
  for (const process of [receiver, worker]) {
    process?.child.kill('SIGTERM');
    await process?.exited;
  }
  await stack.close();
});

const linesOf = (spawned: Spawned) => spawned.output().trim().split('\n').filter(Boolean);

it('logs one JSON object per line from both processes, with the same IDs, serves metrics, and shows current details', async () => {
  const checkout = checkoutCompleted({ email: `${MARKER}@example.com` });
  const charged = orderCreated({ email: `${MARKER}@example.com`, name: MARKER });
  const declined = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD, email: `${MARKER}@example.com` });
  for (const delivery of [checkout, charged, declined]) {
    expect((await post(`${receiverUrl}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);
  }
  expect((await post(`${receiverUrl}/webhooks/${checkout.path}`, checkout.headers, checkout.body)).status).toBe(200);
  const forged = JSON.stringify({ id: `evt_${MARKER}`, type: 'checkout.session.completed' });
  expect((await post(`${receiverUrl}/webhooks/stripe`, stripeHeaders(forged, 'whsec_not_ours'), forged)).status).toBe(400);

  expect(await stack.client.workflow.getHandle(checkout.id).result()).toMatchObject({ outcome: 'fulfilled' });
  expect(await stack.client.workflow.getHandle(charged.id).result()).toMatchObject({ outcome: 'charged' });
  await expect(stack.client.workflow.getHandle(declined.id).result()).rejects.toThrow();

  // Current details, as the Temporal UI reads them (the SDK's built-in metadata query).
  const metadata = await stack.client.workflow.getHandle(charged.id).query<{ currentDetails: string }>('__temporal_workflow_metadata');
  expect(metadata.currentDetails).toBe('**Steps done:** claim, charge, email:receipt\n\n**Outcome:** charged');

  // The worker's Prometheus endpoint: the SDK's own metrics and our business counters.
  const metrics = await (await fetch(metricsUrl)).text();
  expect(metrics).toMatch(/^temporal_workflow_completed\{/m);
  expect(metrics).toMatch(/^durable_webhooks_charges\{[^}]*outcome="succeeded"[^}]*\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_charges\{[^}]*outcome="declined"[^}]*\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_emails_sent\{[^}]*\} \d+$/m);
  expect(await (await fetch(`${receiverUrl}/metrics`)).text()).toMatch(/^webhook_deliveries_total\{source="stripe",outcome="duplicate"\} 1$/m);

  // Stop both, then read everything they wrote.
  for (const process of [receiver, worker]) {
    process.child.kill('SIGTERM');
    await process.exited;
  }
  const lines = [...linesOf(receiver).map((line) => ['receiver', line]), ...linesOf(worker).map((line) => ['worker', line])];
  const entries = lines.map(([component, line]) => {
    expect(() => JSON.parse(line!)).not.toThrow();
    const entry = JSON.parse(line!) as Record<string, unknown>;
    expect(entry).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.stringMatching(/^(debug|info|warn|error)$/), component, message: expect.any(String) });
    return entry;
  });
  expect(entries.find((entry) => entry.component === 'receiver' && entry.message === 'event started' && entry.eventId === charged.id)).toMatchObject({ workflowId: charged.id, source: 'standard' });
  expect(entries.find((entry) => entry.component === 'worker' && entry.activity === 'chargeOrder' && entry.workflowId === declined.id)).toMatchObject({ eventId: declined.id, runId: expect.any(String), attempt: 1, level: 'warn' });

  const output = lines.map(([, line]) => line).join('\n');
  const forbidden = [MARKER, ...Object.values(SECRETS), SECRETS_ENV.STRIPE_WEBHOOK_SECRET, stack.workerEnv.RESEND_API_KEY!, stack.workerEnv.STRIPE_SECRET_KEY!, checkout.headers['stripe-signature']!, charged.headers['webhook-signature']!];
  for (const text of forbidden) expect(output).not.toContain(text);
});
