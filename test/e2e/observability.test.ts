import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { statusQuery, type WebhookEvent } from '../../contracts';
import { fulfilCheckout } from '../../workflows';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { checkoutCompleted, orderCreated, shopifyOrderPaid } from '../support/events';
import { eventually } from '../support/eventually';
import { startOtlpReceiver } from '../support/otlp-receiver';
import { startEndpointServer } from '../support/endpoint-server';
import { freePort } from '../support/ports';
import { ROOT, spawnNpmScript, type Spawned } from '../support/processes';
import { CATALOG_SECRETS, SECRETS, SECRETS_ENV, standardHeaders, stripeHeaders } from '../support/signing';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';

/**
 * `npm run receiver` and `npm run worker` as production runs them, through a few flows: every line
 * either writes is one JSON object with our field names and nothing from a payload, a signature or
 * a secret; the worker serves the SDK's Prometheus metrics with our business counters beside them;
 * each workflow tells the UI where it stands (current details); and with the standard OTEL_*
 * variables, one trace runs from the receiver's span to every activity of the event.
 */
const MARKER = `observability-marker-${randomUUID()}`;
const API_TOKEN = `tok_${randomUUID()}`;
let stack: WorkerStack;
let receiver: Spawned;
let worker: Spawned;
let receiverUrl: string;
let metricsUrl: string;
let receiverMetricsUrl: string;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;

beforeAll(async () => {
  stack = await startStack({ worker: 'external' });
  otlp = await startOtlpReceiver();
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '200' };
  const receiverPort = await freePort();
  const metricsPort = await freePort();
  receiverUrl = `http://localhost:${receiverPort}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const env = { ...stack.workerEnv, ...tracing, NODE_ENV: undefined, ALLOW_PRIVATE_ENDPOINTS: 'true' };
  worker = spawnNpmScript('worker', { ...env, WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
  receiverMetricsUrl = `http://127.0.0.1:${await freePort()}/metrics`;
  receiver = spawnNpmScript('receiver', {
    ...env,
    ...SECRETS_ENV,
    SHOPIFY_WEBHOOK_SECRET: CATALOG_SECRETS.shopify,
    PORT: String(receiverPort),
    RECEIVER_METRICS_ADDRESS: new URL(receiverMetricsUrl).host,
    API_TOKENS: `observability:${API_TOKEN}`,
  });
  await Promise.all([worker.waitFor('worker polling'), receiver.waitFor('receiver listening')]);
});

afterAll(async () => {
  for (const process of [receiver, worker]) {
    process?.child.kill('SIGTERM');
    await process?.exited;
  }
  await stack.close();
  await otlp.close();
});

const linesOf = (spawned: Spawned) => spawned.output().trim().split('\n').filter(Boolean);

it('logs one JSON object per line from both processes, with the same IDs, serves metrics, and shows current details', async () => {
  const checkout = checkoutCompleted({ email: `${MARKER}@example.com` });
  const charged = orderCreated({ email: `${MARKER}@example.com`, name: MARKER });
  const declined = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD, email: `${MARKER}@example.com` });
  const notes = Array.from({ length: 4 }, () => {
    const id = `msg_${randomUUID()}`;
    const body = JSON.stringify({ type: 'note.added', timestamp: new Date().toISOString(), data: { note: 'hello' } });
    return { id, path: 'standard', body, headers: standardHeaders(body, SECRETS.standard, { id }) };
  });
  // At once, more than the receiver's fast path starts at a time: its lanes take them in turn, and
  // each start is made in its own delivery's trace.
  const order = shopifyOrderPaid({ topic: 'orders/paid' });
  const burst = [checkout, charged, declined, order, ...notes];
  const answers = await Promise.all(burst.map((delivery) => post(`${receiverUrl}/webhooks/${delivery.path}`, delivery.headers, delivery.body)));
  expect(answers.map((answer) => answer.status)).toEqual(burst.map(() => 202));
  expect((await post(`${receiverUrl}/webhooks/${checkout.path}`, checkout.headers, checkout.body)).status).toBe(200);
  const forged = JSON.stringify({ id: `evt_${MARKER}`, type: 'checkout.session.completed' });
  expect((await post(`${receiverUrl}/webhooks/stripe`, stripeHeaders(forged, 'whsec_not_ours'), forged)).status).toBe(400);

  // The receiver runs production's default, ACKNOWLEDGE=database: the workflow starts after the answer.
  expect(await resultOnceStarted(stack.client, checkout.id)).toMatchObject({ outcome: 'fulfilled' });
  // What a redelivery starts once Temporal's retention dropped the checkout: a new run chain, which the ledger catches.
  const { events } = await stack.client.workflow.getHandle(checkout.id).fetchHistory();
  const input = defaultPayloadConverter.fromPayload<WebhookEvent>(events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!);
  const again = await stack.client.workflow.start(fulfilCheckout, {
    workflowId: checkout.id,
    taskQueue: stack.taskQueue,
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
  expect(await again.result()).toMatchObject({ outcome: 'duplicate' });

  // One message through our own API to one endpoint.
  const endpoint = await startEndpointServer();
  const v1 = (route: string, body: unknown) =>
    post(
      `${receiverUrl}/v1${route}`,
      { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}`, 'idempotency-key': randomUUID() },
      JSON.stringify(body),
    );
  expect((await v1('/endpoints', { url: endpoint.url })).status).toBe(201);
  expect((await v1('/messages', { eventType: 'report.ready', payload: { marker: MARKER } })).status).toBe(201);
  await eventually('the message is delivered', () => endpoint.received.length === 1);
  await endpoint.close();
  expect(await resultOnceStarted(stack.client, charged.id)).toMatchObject({ outcome: 'charged' });
  await eventually(
    'the declined order waits for retryPayment',
    async () => (await stack.client.workflow.getHandle(declined.id).query(statusQuery)).awaiting !== null,
  );

  // Current details, as the Temporal UI reads them (the SDK's built-in metadata query).
  const metadata = await stack.client.workflow.getHandle(charged.id).query<{ currentDetails: string }>('__temporal_workflow_metadata');
  expect(metadata.currentDetails).toBe('**Steps done:** claim, charge, email:receipt\n\n**Outcome:** charged');

  // The worker's Prometheus endpoint: the SDK's own metrics and our business counters.
  const metrics = await (await fetch(metricsUrl)).text();
  expect(metrics).toMatch(/^temporal_workflow_completed\{/m);
  expect(metrics).toMatch(/^durable_webhooks_charges\{[^}]*outcome="succeeded"[^}]*\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_charges\{[^}]*outcome="declined"[^}]*\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_emails_sent\{[^}]*\} \d+$/m);
  // A keyed flow's event, from receipt to applied in its key's turn.
  await resultOnceStarted(stack.client, order.id);
  await eventually('the key lag is recorded', async () =>
    /^durable_webhooks_key_lag_count\{[^}]*flow="fulfilShopifyOrder"[^}]*\} 1$/m.test(await (await fetch(metricsUrl)).text()),
  );
  const receiverMetrics = await (await fetch(receiverMetricsUrl)).text();
  expect((await fetch(`${receiverUrl}/metrics`)).status).toBe(404);
  expect(receiverMetrics).toMatch(/^webhook_deliveries_total\{source="stripe",outcome="duplicate"\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_ledger_duplicates\{[^}]*kind="duplicate"[^}]*\} 1$/m);
  expect(metrics).toMatch(/^durable_webhooks_deliveries\{[^}]*outcome="delivered"[^}]*\} 1$/m);
  // Every metric the compose setup's Grafana dashboard charts is one these processes serve.
  const dashboard = readFileSync(path.join(ROOT, 'observability/grafana/dashboards/durable-webhooks.json'), 'utf8');
  const charted = new Set(
    (JSON.parse(dashboard) as { panels: Array<{ targets: Array<{ expr: string }> }> }).panels.flatMap((panel) =>
      panel.targets.flatMap((target) => target.expr.match(/\b(?:webhook|temporal|durable_webhooks)_\w+/g) ?? []),
    ),
  );
  // A gauge by source and type (held, unrouted) has no sample until something is held: declared is served.
  for (const name of charted)
    expect({ name, served: new RegExp(`^(?:# TYPE )?${name}[{ ]`, 'm').test(metrics + receiverMetrics) }).toEqual({ name, served: true });

  // One trace: the receiver's span of the delivery, the start, the workflow, and every activity.
  const delivery = () => otlp.spans.find((span) => span.name === 'POST /webhooks/standard' && span.attributes['webhook.event_id'] === charged.id);
  await eventually('the receiver exported its span', () => delivery() !== undefined);
  const { traceId, service } = delivery()!;
  expect(service).toBe('durable-webhooks-receiver');
  const inTrace = () => otlp.spans.filter((span) => span.traceId === traceId);
  const expected = [
    'StartWorkflow:chargeOrder',
    'RunWorkflow:chargeOrder',
    'RunActivity:claimEvent',
    'RunActivity:chargeOrder',
    'RunActivity:sendEmail',
    'RunActivity:completeEvent',
  ];
  await eventually('every span of the event is exported', () => expected.every((name) => inTrace().some((span) => span.name === name)));
  expect(inTrace().find((span) => span.name === 'RunActivity:chargeOrder')!.service).toBe('durable-webhooks-worker');
  const startsInTraceOf = (event: { id: string; path: string }) => {
    const received = otlp.spans.find((span) => span.name === `POST /webhooks/${event.path}` && span.attributes['webhook.event_id'] === event.id);
    return otlp.spans.filter((span) => span.traceId === received?.traceId && span.name.startsWith('StartWorkflow:')).map((span) => span.name);
  };
  await eventually("each delivery's start is exported", () => otlp.spans.filter((span) => span.name.startsWith('StartWorkflow:')).length >= burst.length);
  expect(burst.map(startsInTraceOf)).toEqual([
    ['StartWorkflow:fulfilCheckout'],
    ['StartWorkflow:chargeOrder'],
    ['StartWorkflow:chargeOrder'],
    ['StartWorkflow:fulfilShopifyOrder'],
    ...notes.map(() => ['StartWorkflow:recordEvent']),
  ]);

  // Stop both, then read everything they wrote.
  for (const process of [receiver, worker]) {
    process.child.kill('SIGTERM');
    await process.exited;
  }
  const lines = [...linesOf(receiver).map((line) => ['receiver', line]), ...linesOf(worker).map((line) => ['worker', line])];
  const entries = lines.map(([component, line]) => {
    expect(() => JSON.parse(line!)).not.toThrow();
    const entry = JSON.parse(line!) as Record<string, unknown>;
    expect(entry).toMatchObject({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: expect.stringMatching(/^(debug|info|warn|error)$/),
      component,
      message: expect.any(String),
    });
    return entry;
  });
  expect(entries.find((entry) => entry.component === 'receiver' && entry.message === 'event accepted' && entry.eventId === charged.id)).toMatchObject({
    workflowId: charged.id,
    source: 'standard',
  });
  expect(entries.find((entry) => entry.component === 'worker' && entry.activity === 'chargeOrder' && entry.workflowId === declined.id)).toMatchObject({
    eventId: declined.id,
    runId: expect.any(String),
    attempt: 1,
    level: 'warn',
  });

  const output = lines.map(([, line]) => line).join('\n');
  const forbidden = [
    MARKER,
    ...Object.values(SECRETS),
    SECRETS_ENV.STRIPE_WEBHOOK_SECRET,
    stack.workerEnv.RESEND_API_KEY!,
    stack.workerEnv.STRIPE_SECRET_KEY!,
    checkout.headers['stripe-signature']!,
    charged.headers['webhook-signature']!,
  ];
  for (const text of forbidden) expect(output).not.toContain(text);
});
