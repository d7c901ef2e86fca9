import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { burstOf } from '../../src/db/holds';
import { startBacklog } from '../../src/db/inbox';
import { StartSweeper } from '../../src/intake/sweeper';
import { silentLogger } from '../../src/core/logger';
import { startReceiver } from '../../src/receiver';
import { loadReceiverConfig } from '../../src/config';
import { checkoutCompleted, type SignedDelivery } from '../support/events';
import { runCli } from '../support/processes';
import { SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';
import { workflowExists } from '../../src/temporal/availability';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';

/**
 * A bulk day on the real dev server and PostgreSQL: a held source's deliveries are answered and
 * stored and start nothing, in both acknowledge modes; a release at a rate starts each once, the rate
 * shared by every sweeper of the cluster. A type routed to `ignore` starts nothing; one no route maps
 * is counted.
 */
const ADMIN_TOKEN = 'holds-test-admin-token-0123456789abcdef';
// A second Stripe source whose invoices are ignored (and its own secret, to sign them).
const config = path.join(mkdtempSync(path.join(tmpdir(), 'dw-bulk-')), 'webhooks.yaml');
writeFileSync(config, 'sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_billing\n    routes:\n      "invoice.*": ignore\n');
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { ADMIN_TOKEN, WEBHOOKS_CONFIG: config } });
});
afterAll(() => stack?.close());

const cli = (...args: string[]) => runCli([...args, '--json'], { DATABASE_URL: stack.workerEnv.DATABASE_URL, WEBHOOKS_CONFIG: config });
const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A client whose workflow starts are recorded (workflow ID and when), then made for real. */
function recordingClient() {
  const starts: Array<{ workflowId: string; at: number }> = [];
  const client = Object.create(stack.client) as Client;
  Object.defineProperty(client, 'workflow', {
    value: Object.assign(Object.create(stack.client.workflow), {
      start: (...args: Parameters<Client['workflow']['start']>) => {
        starts.push({ workflowId: args[1].workflowId, at: Date.now() });
        return stack.client.workflow.start(...args);
      },
    }),
  });
  return { client, starts };
}

/** The most starts in any one second. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= 1000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

async function sendAll(deliveries: Array<{ url: string; delivery: SignedDelivery }>, concurrency = 8): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < deliveries.length) {
      const { url, delivery } = deliveries[next++]!;
      statuses.push((await post(`${url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return statuses;
}

it('holds a source during a storm on two receivers (both acknowledge modes), then releases it at 20/s across two sweepers: each order once', async () => {
  const held = await cli('hold', 'stripe', '--reason', 'the email API is down');
  expect(held.error).toBeUndefined();
  const hold = JSON.parse(held.output) as { id: string; createdBy: string };
  expect(hold.createdBy).toMatch(/^cli user /);

  // The stack's receiver acknowledges at Temporal's confirmation; this one at the commit, and sweeps.
  const first = recordingClient();
  const second = recordingClient();
  const databaseMode = await startReceiver(
    loadReceiverConfig(
      { ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '127.0.0.1:0', TEMPORAL_TASK_QUEUE: stack.taskQueue, ACKNOWLEDGE: 'database' },
      { development: true },
    ),
    first.client,
    silentLogger,
    stack.db,
  );
  const sweeper = new StartSweeper(stack.db, second.client, { taskQueue: stack.taskQueue, logger: silentLogger });
  await sweeper.start();
  const orders = Array.from({ length: 150 }, () => checkoutCompleted());
  try {
    // Every order twice, the copies racing on the two receivers.
    const statuses = await sendAll(
      orders.flatMap((delivery) => [
        { url: stack.url, delivery },
        { url: databaseMode.url, delivery },
      ]),
    );
    expect(statuses.every((status) => status === 200 || status === 202)).toBe(true);
    expect(statuses.filter((status) => status === 202)).toHaveLength(orders.length);
    expect(await startBacklog(stack.db)).toMatchObject({ count: orders.length, held: orders.length });
    expect([...first.starts, ...second.starts]).toEqual([]);
    expect(await stack.client.workflow.count(`TaskQueue = '${stack.taskQueue}'`)).toMatchObject({ count: 0 });
    const metrics = await (await fetch(databaseMode.metricsUrl!)).text();
    expect(metrics).toContain(`webhook_held_events{source="stripe",type="checkout.session.completed"} ${orders.length}`);
    const listed = (await (await admin('GET', '/holds')).json()) as { holds: Array<{ id: string; held: number; reason: string }> };
    expect(listed.holds).toEqual([expect.objectContaining({ id: hold.id, held: orders.length, reason: 'the email API is down' })]);

    const rate = 20;
    const released = await admin('DELETE', `/holds/${hold.id}?rate=${rate}/s`);
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ due: orders.length, budget: `release:${hold.id}` });
    await Promise.all(
      orders.map(async (delivery) => expect(await resultOnceStarted(stack.client, delivery.id, 60_000)).toMatchObject({ outcome: 'fulfilled' })),
    );

    const starts = [...first.starts, ...second.starts];
    // Both sweepers took part, and together kept to the one budget.
    expect(first.starts.length).toBeGreaterThan(0);
    expect(second.starts.length).toBeGreaterThan(0);
    expect(new Set(starts.map((start) => start.workflowId)).size).toBe(orders.length);
    expect(busiestSecond(starts.map((start) => start.at))).toBeLessThanOrEqual(rate + burstOf(rate));
    const ids = new Set(orders.map((order) => order.id));
    const charges = stack.stripe.requests.filter(
      (request) => request.method === 'POST' && ids.has(request.idempotencyKey?.split(':')[0] ?? '') && !request.replayed,
    );
    // One PaymentIntent update and one email per order, each under its own event's key.
    expect(new Set(charges.map((request) => request.idempotencyKey)).size).toBe(orders.length);
    expect(charges).toHaveLength(orders.length);
    const emails = stack.resend.emails.filter((email) => ids.has(email.idempotencyKey?.split(':')[0] ?? ''));
    expect(emails).toHaveLength(orders.length);

    const audit = JSON.parse((await cli('holds', '--all')).output) as { holds: Array<{ id: string; source: string; releasedBy: string; releaseRate: number }> };
    expect(audit.holds.filter((each) => each.source === 'stripe')).toEqual([
      expect.objectContaining({ id: hold.id, releasedBy: 'admin token "admin"', releaseRate: rate }),
    ]);
  } finally {
    await sweeper.stop();
    await databaseMode.close();
  }
  // 300 deliveries, then 150 orders run end to end at a paced 20 a second: a busy 2-core CI run took longer than 60 s.
}, 120_000);

it('refuses a release of no hold (404) and a hold of an unknown source (400; the CLI warns), naming what to do', async () => {
  const none = await admin('DELETE', '/holds/hold_0000000000000000');
  expect(none.status).toBe(404);
  expect(await none.json()).toMatchObject({ detail: expect.stringContaining('durable-webhooks holds') });
  const unknown = await admin('POST', '/holds', { source: 'nope' });
  expect(unknown.status).toBe(400);
  expect(await unknown.json()).toMatchObject({
    detail: expect.stringContaining('"nope" is configured here as no source, and the body store has no event of it'),
  });
  // A CLI may lack the receiver's secrets, so it holds a source it does not know (before a sale, say), and says so: a typo shows at once.
  const typo = await cli('hold', 'stirpe');
  expect(typo.code).toBe(0);
  expect(JSON.parse(typo.output)).toMatchObject({
    unknownSource: expect.stringContaining('"stirpe" is configured here as no source, and the body store has no event of it'),
  });
  expect((await cli('release', 'stirpe')).code).toBe(0);
  const pattern = await admin('POST', '/holds', { source: 'stripe', type: 'checkout*.x' });
  expect(pattern.status).toBe(400);
  const rate = await admin('POST', '/holds/release', { source: 'stripe', rate: 'fast' });
  expect(rate.status).toBe(400);
});

it('stores and answers a type its routes ignore, starts nothing for it (a copy is a duplicate), and shows it; a type no route maps is counted', async () => {
  const event = stripeEvent({ type: 'invoice.paid' });
  const body = JSON.stringify(event);
  const headers = stripeHeaders(body, 'whsec_billing');
  const first = await post(`${stack.url}/webhooks/billing`, headers, body);
  expect([first.status, first.json]).toEqual([202, { status: 'ignored', eventId: event.id, workflowId: event.id }]);
  const again = await post(`${stack.url}/webhooks/billing`, headers, body);
  expect([again.status, again.json]).toEqual([200, { status: 'duplicate', eventId: event.id, workflowId: event.id, started: false }]);
  expect(await workflowExists(stack.client, event.id as string)).toBe(false);
  const shown = await cli('events', 'show', event.id as string);
  expect(JSON.parse(shown.output)).toMatchObject({
    eventId: event.id,
    status: 'ignored',
    source: 'billing',
    eventType: 'invoice.paid',
    body: { state: 'stored' },
  });

  // A type nothing routes at the stripe source: recorded (the default flow) and counted.
  const unrouted = stripeEvent({ type: 'customer.tax_id.created' });
  const unroutedBody = JSON.stringify(unrouted);
  expect((await post(`${stack.url}/webhooks/stripe`, stripeHeaders(unroutedBody, SECRETS.stripe), unroutedBody)).status).toBe(202);
  expect(await resultOnceStarted(stack.client, unrouted.id as string)).toMatchObject({ outcome: 'ignored' });
  const status = JSON.parse((await cli('status')).output) as { unrouted: Array<{ source: string; type: string; count: number }> };
  expect(status.unrouted).toContainEqual(expect.objectContaining({ source: 'stripe', type: 'customer.tax_id.created', count: 1 }));
  expect(status.unrouted.some((each) => each.type === 'invoice.paid')).toBe(false);
  const metrics = await (await fetch(stack.metricsUrl)).text();
  expect(metrics).toContain('webhook_unrouted_events{source="stripe",type="customer.tax_id.created"} 1');
});
