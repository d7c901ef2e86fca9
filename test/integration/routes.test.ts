import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { stringify } from 'yaml';
import { ProviderKind, subscriberWorkflowId } from '../../contracts';
import { createHold } from '../../src/db/holds';
import { Router, type Routes } from '../../src/flows';
import { EventIntake } from '../../src/intake/starter';
import type { RoutePreview } from '../../src/intake/route-preview';
import { fulfilCheckoutFlow, recordEventFlow, routeEventFlow } from '../../workflows';
import { stripeEvent, stripeHeaders } from '../support/signing';
import { consolePage as consoleAt } from '../support/console-page';
import { eventually } from '../support/eventually';
import { runCli } from '../support/processes';
import { loadReceiverConfig } from '../../src/config';
import { silentLogger } from '../../src/core/logger';
import { startReceiver } from '../../src/receiver';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';

/**
 * Routes with several flows and filters (docs/flows.md#routes), on the dev server and PostgreSQL:
 * the event's own workflow starts each flow a filter took as a run of its own, which fails and is
 * retried alone; an event no filter takes is stored, answered and recorded as filtered.
 */
const SECRET = 'whsec_routed';
const ADMIN_TOKEN = 'routes-test-admin-token-0123456789abcdef';
/** Two sources that store the same events, each under its own routes: today's, and a candidate's. */
const HISTORY_ROUTES = {
  today: {
    'checkout.session.completed': ['fulfilCheckout', { flow: 'notifyGitHub', if: 'body.data.object.amount_total >= 100000' }],
    'invoice.*': { flow: 'recordEvent', if: 'body.data.object.paid' },
  },
  candidate: {
    'checkout.session.completed': [{ flow: 'fulfilCheckout', if: 'body.data.object.currency == "eur"' }, 'recordEvent'],
    'invoice.paid': 'ignore',
    'invoice.*': 'notifyGitHub',
  },
} satisfies Record<string, Routes>;
const config = path.join(mkdtempSync(path.join(tmpdir(), 'dw-routes-')), 'webhooks.yaml');
writeFileSync(
  config,
  `sources:
  - name: routed
    kind: stripe
    secret: ${SECRET}
    routes:
      checkout.session.completed:
        - fulfilCheckout
        - recordEvent
        - flow: notifyGitHub
          if: body.data.object.amount_total >= 100000
      invoice.paid:
        - flow: recordEvent
          if: body.data.object.paid
        - flow: notifyGitHub
          if: body.data.object.amount_paid > 0
      customer.subscription.updated:
        - applySubscriptionEvent
        - recordEvent
${stringify([
  { name: 'history-today', kind: 'stripe', secret: SECRET, workflowIdPrefix: 'history-today:', routes: HISTORY_ROUTES.today },
  { name: 'history-candidate', kind: 'stripe', secret: SECRET, workflowIdPrefix: 'history-candidate:', routes: HISTORY_ROUTES.candidate },
]).replace(/^/gm, '  ')}`,
);

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOKS_CONFIG: config, ADMIN_TOKEN } });
});
afterAll(() => stack?.close());

function signed(type: string, object: Record<string, unknown>) {
  const event = stripeEvent({ type, data: { object } });
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, SECRET) };
}
const deliver = (delivery: ReturnType<typeof signed>) => post(`${stack.url}/webhooks/routed`, delivery.headers, delivery.body);
const handle = (workflowId: string) => stack.client.workflow.getHandle(workflowId);
const ledger = async (eventId: string) =>
  (
    await stack.db.query<{ event_id: string; status: string; outcome: unknown }>(
      `SELECT event_id, status, outcome FROM processed_events WHERE source = 'routed' AND event_id LIKE $1 || '%' ORDER BY event_id`,
      [eventId],
    )
  ).rows;
const consolePage = (pathname: string) => consoleAt(stack.url, ADMIN_TOKEN, pathname);
const cli = (...args: string[]) => runCli([...args, '--json'], { DATABASE_URL: stack.workerEnv.DATABASE_URL, WEBHOOKS_CONFIG: config });

it("a keyed flow's run of its own takes its key's turn, and the ledger names the key under the run's own ID", async () => {
  const subscriptionId = `sub_${randomUUID()}`;
  const update = signed('customer.subscription.updated', { id: subscriptionId, object: 'subscription', customer: 'cus_routed', status: 'active' });
  const apply = subscriberWorkflowId(update.id, 'applySubscriptionEvent');
  expect((await deliver(update)).status).toBe(202);
  expect(await resultOnceStarted(stack.client, apply)).toMatchObject({ outcome: 'stored', entity: { key: subscriptionId, after: null } });
  const keyed = await stack.db.query('SELECT entity_flow, entity_key FROM processed_events WHERE source = $1 AND event_id = $2', ['routed', apply]);
  expect(keyed.rows).toEqual([{ entity_flow: 'applySubscriptionEvent', entity_key: subscriptionId }]);
});

it('one event to three flows, one filtered out: two runs of their own; a redelivery starts nothing; the failed one is retried alone', async () => {
  const checkout = signed('checkout.session.completed', {
    id: `cs_${randomUUID()}`,
    amount_total: 4200,
    currency: 'eur',
    payment_intent: `pi_${randomUUID().replace(/-/g, '')}`,
    customer_details: { email: 'ada@example.com' },
    metadata: { order_id: `ord_${randomUUID()}` },
  });
  const fulfil = subscriberWorkflowId(checkout.id, fulfilCheckoutFlow.name);
  const record = subscriberWorkflowId(checkout.id, recordEventFlow.name);
  stack.resend.failNextWith(422, 'The to address is not valid.');

  expect(await deliver(checkout)).toMatchObject({ status: 202, json: { status: 'started', workflowId: checkout.id } });
  expect(await handle(checkout.id).result()).toMatchObject({ outcome: 'routed', eventId: checkout.id });
  expect((await handle(checkout.id).describe()).type).toBe(routeEventFlow.name);
  await expect(handle(fulfil).result()).rejects.toThrow(WorkflowFailedError);
  expect(await handle(record).result()).toMatchObject({ outcome: 'ignored', eventId: checkout.id });
  await expect(handle(subscriberWorkflowId(checkout.id, 'notifyGitHub')).describe()).rejects.toThrow(WorkflowNotFoundError);
  const recordRun = (await handle(record).describe()).runId;

  expect(await ledger(checkout.id)).toEqual([
    {
      event_id: checkout.id,
      status: 'completed',
      outcome: {
        routed: [
          { flow: 'fulfilCheckout', workflowId: fulfil },
          { flow: 'recordEvent', workflowId: record },
        ],
        filtered: ['notifyGitHub'],
        failures: [],
      },
    },
    { event_id: fulfil, status: 'failed', outcome: expect.objectContaining({ errorClass: expect.stringContaining('sendEmail') }) },
    { event_id: record, status: 'ignored', outcome: { reason: 'no flow for this event type' } },
  ]);

  // The console's page of the event links each flow's run, and says which flow its filter left out; a run's page links the event.
  const page = await consolePage(`/events/${checkout.id}`);
  expect(page).toContain(`<a href="/console/events/${encodeURIComponent(fulfil)}">fulfilCheckout</a>`);
  expect(page).toContain(`<a href="/console/events/${encodeURIComponent(record)}">recordEvent</a>`);
  expect(page).toContain('filtered out: notifyGitHub');
  expect(await consolePage(`/events/${encodeURIComponent(record)}`)).toContain(
    `<dt>Subscriber of</dt><dd><a href="/console/events/${checkout.id}">${checkout.id}</a>`,
  );

  // A redelivery is the engine's duplicate, and a reset of the event finds each flow started: no flow starts again.
  expect(await deliver(checkout)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
  const { runId } = JSON.parse((await cli('events', 'reset', checkout.id, '--to', 'first', '--reason', 'routes again')).output);
  expect(await stack.client.workflow.getHandle(checkout.id, runId).result()).toMatchObject({ outcome: 'routed' });
  expect((await handle(record).describe()).runId).toBe(recordRun);

  // docs/flows.md's commands for one flow of an event: show its run, list the flow's failed runs, retry it.
  expect(JSON.parse((await cli('events', 'show', fulfil)).output)).toMatchObject({ eventId: fulfil, workflowType: 'fulfilCheckout', status: 'failed' });
  const listed = async () =>
    (
      JSON.parse((await cli('events', 'list', '--flow', 'fulfilCheckout', '--status', 'failed', '--source', 'routed')).output) as Array<{ eventId: string }>
    ).map((event) => event.eventId);
  await eventually('visibility lists the failed run by its flow', async () => (await listed()).includes(fulfil));
  expect(JSON.parse((await cli('events', 'retry', checkout.id, '--flow', 'fulfilCheckout', '--reason', 'address fixed')).output)).toMatchObject({
    eventId: fulfil,
    outcome: 'done',
  });
  await eventually('the retried flow completes', async () => (await handle(fulfil).describe()).status.name === 'COMPLETED');
  expect(await handle(fulfil).result()).toMatchObject({ outcome: 'fulfilled' });

  // The retried flow's steps ran once each; the other flow's run is the one that ran first.
  expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(fulfil))).toHaveLength(1);
  expect(stack.stripe.requests.filter((request) => request.idempotencyKey?.startsWith(fulfil))).toHaveLength(1);
  expect((await handle(record).describe()).runId).toBe(recordRun);
  expect((await ledger(checkout.id)).map(({ event_id, status }) => [event_id, status])).toEqual([
    [checkout.id, 'completed'],
    [fulfil, 'completed'],
    [record, 'ignored'],
  ]);
});

it('under ACKNOWLEDGE=database, an event answered at the commit is routed from the inbox: its subscribers start once', async () => {
  const receiver = await startReceiver(
    loadReceiverConfig(
      { WEBHOOKS_CONFIG: config, PORT: '0', RECEIVER_METRICS_ADDRESS: '', TEMPORAL_TASK_QUEUE: stack.taskQueue, ACKNOWLEDGE: 'database' },
      { development: true },
    ),
    stack.client,
    silentLogger,
    stack.db,
  );
  try {
    const invoice = signed('invoice.paid', { id: `in_${randomUUID()}`, paid: true, amount_paid: 900 });
    expect(await post(`${receiver.url}/webhooks/routed`, invoice.headers, invoice.body)).toMatchObject({ status: 202, json: { status: 'accepted' } });
    expect(await resultOnceStarted(stack.client, invoice.id)).toMatchObject({ outcome: 'routed' });
    for (const flow of ['recordEvent', 'notifyGitHub'])
      expect(await handle(subscriberWorkflowId(invoice.id, flow)).result()).toMatchObject({ eventId: invoice.id });
    expect(await post(`${receiver.url}/webhooks/routed`, invoice.headers, invoice.body)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
  } finally {
    await receiver.close();
  }
});

it('an event no filter takes is stored, answered and recorded as filtered, and starts nothing', async () => {
  const invoice = signed('invoice.paid', { id: 'in_routed_1', paid: false, amount_paid: 0 });
  expect(await deliver(invoice)).toMatchObject({ status: 202, json: { status: 'filtered', workflowId: invoice.id } });
  await expect(handle(invoice.id).describe()).rejects.toThrow(WorkflowNotFoundError);
  expect(JSON.parse((await cli('events', 'show', invoice.id)).output)).toMatchObject({
    status: 'filtered',
    workflowType: '(none: no filter of its route took it)',
    eventType: 'invoice.paid',
  });
  expect(await deliver(invoice)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
});

it('a filter that cannot decide for one event is recorded as that route failure, and blocks neither the other flows nor the answer', async () => {
  const invoice = signed('invoice.paid', { id: 'in_routed_2', amount_paid: 500 });
  expect(await deliver(invoice)).toMatchObject({ status: 202, json: { status: 'started' } });
  expect(await handle(invoice.id).result()).toMatchObject({ outcome: 'routed, with failed filters' });
  expect(await handle(subscriberWorkflowId(invoice.id, 'notifyGitHub')).result()).toMatchObject({ eventId: invoice.id });
  expect((await ledger(invoice.id))[0]).toMatchObject({
    status: 'completed',
    outcome: {
      routed: [{ flow: 'notifyGitHub' }],
      filtered: [],
      failures: [{ flow: 'recordEvent', error: expect.stringMatching(/^the filter "body.data.object.paid" .*paid/) }],
    },
  });
});

it('`flows` and the console show each route with its filter, and how many events each flow took over the last hour', async () => {
  const listing = async () =>
    Object.fromEntries(
      (JSON.parse((await cli('flows')).output) as Array<{ name: string; events: Record<string, string[]>; matchedLastHour?: Record<string, number> }>).map(
        (flow) => [flow.name, { events: flow.events.routed, matched: flow.matchedLastHour?.routed }],
      ),
    );
  const before = await listing();
  expect(before.notifyGitHub!.events).toEqual([
    'checkout.session.completed if body.data.object.amount_total >= 100000',
    'invoice.paid if body.data.object.amount_paid > 0',
  ]);
  expect(before.fulfilCheckout!.events).toEqual(['checkout.session.completed (with others)']);

  const session = (amount: number) =>
    signed('checkout.session.completed', { id: `cs_${randomUUID()}`, amount_total: amount, currency: 'eur', metadata: { order_id: `ord_${randomUUID()}` } });
  for (const delivery of [session(4200), session(250_000)]) {
    expect(await deliver(delivery)).toMatchObject({ status: 202 });
    await handle(delivery.id).result();
  }
  const after = await listing();
  expect(after.fulfilCheckout!.matched! - before.fulfilCheckout!.matched!).toBe(2);
  expect(after.recordEvent!.matched! - before.recordEvent!.matched!).toBe(2);
  expect(after.notifyGitHub!.matched! - before.notifyGitHub!.matched!).toBe(1);

  // The console's overview shows the same, route by route.
  const overview = await consolePage('');
  expect(overview).toContain(
    `<td>routed</td><td>checkout.session.completed</td><td>notifyGitHub</td><td><code>body.data.object.amount_total &gt;= 100000</code></td><td class="number">${after.notifyGitHub!.matched}</td>`,
  );
  expect(overview).toContain(
    `<td>routed</td><td>checkout.session.completed</td><td>fulfilCheckout</td><td><span class="muted">always</span></td><td class="number">${after.fulfilCheckout!.matched}</td>`,
  );
});

describe('routes test', () => {
  const { today, candidate } = HISTORY_ROUTES;

  /** Stores each event through the intake as the receiver does, under a source's routes; held, so nothing starts. */
  async function apply(source: string, routes: Routes, events: ReadonlyArray<{ id: string; type: string; payload: Record<string, unknown> }>) {
    await createHold(stack.db, { source, by: 'routes test' });
    const intake = new EventIntake(stack.client, stack.db, { acknowledge: 'temporal', taskQueue: stack.taskQueue });
    const target = { workflowIdPrefix: `${source}:`, router: new Router(ProviderKind.STRIPE, routes) };
    const receivedAt = new Date().toISOString();
    for (let next = 0; next < events.length; next += 100) {
      await Promise.all(
        events.slice(next, next + 100).map(({ id, type, payload }) =>
          intake.start(
            {
              source,
              provider: ProviderKind.STRIPE,
              id,
              type,
              occurredAt: receivedAt,
              receivedAt,
              payload,
              body: { raw: Buffer.from(JSON.stringify(payload)), contentType: 'application/json', signatureHeaders: {} },
            },
            target,
          ),
        ),
      );
    }
  }

  /** Per destination, what the intake recorded for a source: its flow, its filters' flows, ignored, filtered. */
  async function recorded(source: string): Promise<Record<string, number>> {
    const { rows } = await stack.db.query<{ to: string; events: string }>(
      `SELECT to_, count(*) AS events FROM (
         SELECT CASE WHEN filtered THEN '(filtered)' WHEN ignored_at IS NOT NULL THEN '(ignored)' ELSE start->>'flow' END AS to_
           FROM event_bodies WHERE source = $1 AND NOT (start->>'flow' = 'routeEvent' AND NOT filtered)
         UNION ALL
         SELECT routed->>'flow' FROM event_bodies, jsonb_array_elements(start->'input'->'routes'->'flows') AS routed WHERE source = $1
         UNION ALL
         SELECT (failure->>'flow') || ' (filter failed)' FROM event_bodies, jsonb_array_elements(start->'input'->'routes'->'failures') AS failure WHERE source = $1
       ) applied GROUP BY to_`,
      [source],
    );
    return Object.fromEntries(rows.map((row) => [(row as unknown as { to_: string }).to_, Number(row.events)]));
  }

  it('on 10,000 stored events reports the counts applying each configuration records, and starts nothing', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const events = Array.from({ length: 10_000 }, (_, index) => {
      const type = ['checkout.session.completed', 'invoice.paid', 'invoice.finalized'][Math.floor(random() * 3)]!;
      // One in fifty invoices has no `paid` field: today's filter cannot decide for it.
      const object =
        type === 'checkout.session.completed'
          ? { id: `cs_${index}`, amount_total: Math.floor(random() * 200_000), currency: random() < 0.5 ? 'eur' : 'usd' }
          : { id: `in_${index}`, ...(random() < 0.98 && { paid: random() < 0.5 }) };
      return { id: `evt_history_${index}`, type, payload: { id: `evt_history_${index}`, object: 'event', type, data: { object } } };
    });
    await Promise.all([apply('history-today', today, events), apply('history-candidate', candidate, events)]);
    const started = await workflowsOf('history-');

    const file = path.join(path.dirname(config), 'candidate.yaml');
    writeFileSync(file, stringify({ sources: [{ name: 'history-today', kind: 'stripe', secret: SECRET, routes: candidate }] }));
    const preview = JSON.parse((await cli('routes', 'test', '--config', file, '--since', '1h', '--source', 'history-today')).output) as RoutePreview;
    expect(preview.events).toBe(10_000);
    const column = (which: 'today' | 'candidate') => Object.fromEntries(preview.routes.filter((row) => row[which] > 0).map((row) => [row.to, row[which]]));
    expect(column('today')).toEqual(await recorded('history-today'));
    expect(column('candidate')).toEqual(await recorded('history-candidate'));
    expect(column('today')['recordEvent (filter failed)']).toBeGreaterThan(0);
    expect(preview.changed).toBeGreaterThan(0);
    expect(preview.examples).toHaveLength(10);
    expect(await workflowsOf('history-')).toBe(started);
  });
});

/** How many workflows of the sources whose names start so exist. */
async function workflowsOf(prefix: string): Promise<number> {
  return (await stack.client.workflow.count(`WebhookSource STARTS_WITH '${prefix}'`)).count;
}
