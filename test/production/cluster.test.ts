import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WorkflowNotFoundError } from '@temporalio/client';
import { entityWorkflowId, statusQuery } from '../../contracts';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { eventually } from '../support/eventually';
import { checkoutCompleted, orderCreated, subscriptionEvent, type SignedDelivery } from '../support/events';
import { startEndpointServer } from '../support/endpoint-server';
import { githubHeaders, SECRETS, stripeEvent, stripeHeaders } from '../support/signing';
import { post } from '../support/stack';
import { ADMIN_TOKEN, API_TOKEN, startTopology, type Topology } from '../support/topology';

/**
 * The production topology (`npm run cluster`, two `npm run receiver`, two `npm run worker`, all as
 * processes from the production build), its receivers acknowledging at Temporal's confirmation
 * (ACKNOWLEDGE=temporal; test/production/inbox.test.ts runs the default, database), through every flow and each fault users meet: a worker
 * killed mid-charge, the Temporal server restarted during a storm of deliveries, and PostgreSQL
 * restarted under everything.
 */
let topology: Topology;
beforeAll(async () => {
  topology = await startTopology({ ACKNOWLEDGE: 'temporal', REVIEW_THRESHOLD: '100000', REVIEW_TIMEOUT: '1h' });
}, 180_000);
afterAll(() => topology?.close(), 60_000);

/** Deliveries alternate between the two receivers. */
let turn = 0;
const receiverUrl = () => topology.receivers[turn++ % topology.receivers.length]!.url;
const deliver = (delivery: SignedDelivery, url = receiverUrl()) => post(`${url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const resultOf = (workflowId: string) => topology.client.workflow.getHandle(workflowId).result();
const rows = async (sql: string, params: unknown[]) => (await topology.db.query(sql, params)).rows;
const chargesFor = (eventId: string) => topology.stripe.charges().filter((intent) => intent.metadata.event_id === eventId);
const emailsFor = (eventId: string) => topology.resend.emails.filter((email) => email.idempotencyKey?.startsWith(eventId));

/**
 * Delivers like a provider: retries a 5xx (503 while Temporal is away) until a 2xx, for a bounded
 * time. `onStatus` sees every answer.
 */
async function deliverUntilAccepted(delivery: SignedDelivery, onStatus: (status: number) => void = () => {}): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + 150_000;
  for (;;) {
    const status = await deliver(delivery).then(
      (response) => response.status,
      () => 599,
    );
    statuses.push(status);
    onStatus(status);
    if (status < 500 || Date.now() > deadline) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function inParallel<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

/** Each accepted order was charged once, paid once and got one receipt. */
async function expectChargedOnce(deliveries: Array<SignedDelivery & { orderId: string }>): Promise<void> {
  for (const delivery of deliveries) {
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'charged' });
    expect({ id: delivery.id, charges: chargesFor(delivery.id).length, emails: emailsFor(delivery.id).length }).toEqual({
      id: delivery.id,
      charges: 1,
      emails: 1,
    });
    expect(await rows('SELECT status FROM orders WHERE id = $1', [delivery.orderId])).toEqual([{ status: 'paid' }]);
  }
}

describe('the production topology', () => {
  it('runs without NODE_ENV and refuses the development secrets', async () => {
    expect(topology.env.NODE_ENV).toBeUndefined();
    const event = stripeEvent();
    const body = JSON.stringify(event);
    const signedWithDevelopmentSecret = await post(`${receiverUrl()}/webhooks/stripe`, stripeHeaders(body, 'whsec_durable_webhooks_development_only'), body);
    expect(signedWithDevelopmentSecret.status).toBe(400);
  });

  it('runs every flow end to end, with deliveries spread over both receivers', async () => {
    const [first, second] = topology.receivers.map((receiver) => receiver.url) as [string, string];

    const checkout = checkoutCompleted();
    expect((await deliver(checkout, first)).status).toBe(202);
    expect((await deliver(checkout, second)).json).toMatchObject({ status: 'duplicate' });
    expect(await resultOf(checkout.id)).toMatchObject({ outcome: 'fulfilled' });
    expect(emailsFor(checkout.id)).toHaveLength(1);

    const order = orderCreated({ amount: 4200 });
    expect((await deliver(order, second)).status).toBe(202);
    await expectChargedOnce([order]);

    // A held order, approved through the admin API of the other receiver.
    const held = orderCreated({ amount: 150_000 });
    expect((await deliver(held, first)).status).toBe(202);
    const handle = topology.client.workflow.getHandle(held.id);
    await eventually('the order waits for approval', async () => (await handle.query(statusQuery)).waitingFor !== null);
    const approve = await fetch(`${second}/admin/events/${held.id}/signals/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ by: 'ops' }),
    });
    expect(approve.status).toBe(202);
    await expectChargedOnce([held]);
    // The admin API shows the ledger record beside what Temporal says, as `events show` does.
    const shown = await fetch(`${first}/admin/events/${held.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(await shown.json()).toMatchObject({
      status: 'completed',
      ledger: { status: 'completed', charges: [expect.objectContaining({ attempt: 1, outcome: 'succeeded' })] },
    });

    // A declined order waits for retryPayment, sent through the other receiver's admin API.
    const declined = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
    expect((await deliver(declined, first)).status).toBe(202);
    const declinedHandle = topology.client.workflow.getHandle(declined.id);
    await eventually('the declined order waits for retryPayment', async () => (await declinedHandle.query(statusQuery)).awaiting !== null);
    const retry = await fetch(`${second}/admin/events/${declined.id}/signals/retryPayment`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paymentMethod: 'pm_card_visa' }),
    });
    expect(retry.status).toBe(202);
    expect(await resultOf(declined.id)).toMatchObject({ outcome: 'charged' });
    expect(chargesFor(declined.id)).toHaveLength(1);
    expect(emailsFor(declined.id).map((email) => email.idempotencyKey)).toEqual([`${declined.id}:email:payment-failed:1`, `${declined.id}:email:receipt`]);
    expect(await rows('SELECT attempt, outcome FROM charge_attempts WHERE event_id = $1 ORDER BY attempt', [declined.id])).toEqual([
      { attempt: 1, outcome: 'declined' },
      { attempt: 2, outcome: 'succeeded' },
    ]);

    const delivery = randomUUID();
    const issue = JSON.stringify({
      action: 'opened',
      issue: { number: 1, title: 'Refund', html_url: 'https://github.com/o/r/issues/1', user: { login: 'octocat' } },
      repository: { full_name: 'o/r' },
    });
    expect((await post(`${first}/webhooks/github`, await githubHeaders(issue, SECRETS.github, { delivery, event: 'issues' }), issue)).status).toBe(202);
    expect(await resultOf(delivery)).toMatchObject({ outcome: 'notified' });
    expect(emailsFor(delivery)).toHaveLength(1);

    const subscriptionId = `sub_${randomUUID()}`;
    const newest = subscriptionEvent(subscriptionId, 'updated', 1_700_000_300, 'past_due');
    const oldest = subscriptionEvent(subscriptionId, 'created', 1_700_000_100, 'incomplete');
    // In the subscription's turns, newest first: the older event is superseded.
    for (const [event, outcome] of [
      [newest, 'stored'],
      [oldest, 'superseded'],
    ] as const) {
      expect((await deliver(event)).status).toBe(202);
      expect(await resultOf(event.id)).toMatchObject({ outcome, entity: { key: subscriptionId } });
    }
    expect(await rows('SELECT status FROM subscriptions WHERE id = $1', [subscriptionId])).toEqual([{ status: 'past_due' }]);
    // The key was free each time: each event held it itself, and no entity ran on the real server.
    await expect(topology.client.workflow.getHandle(entityWorkflowId('applySubscriptionEvent', 'stripe', subscriptionId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(await rows('SELECT holder, last_event_id FROM entity_keys WHERE flow = $1 AND key = $2', ['applySubscriptionEvent', subscriptionId])).toEqual([
      { holder: null, last_event_id: newest.id },
    ]);

    const invoice = stripeEvent({ type: 'invoice.paid' });
    const invoiceBody = JSON.stringify(invoice);
    expect((await post(`${second}/webhooks/stripe`, stripeHeaders(invoiceBody, SECRETS.stripe), invoiceBody)).status).toBe(202);
    expect(await resultOf(invoice.id as string)).toMatchObject({ outcome: 'ignored' });

    // Our own API: an endpoint registered on one receiver, a message published on the other.
    const endpoint = await startEndpointServer();
    const api = (url: string, path: string, body: unknown, key?: string) =>
      fetch(`${url}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json', ...(key && { 'idempotency-key': key }) },
        body: JSON.stringify(body),
      });
    const registered = (await (await api(first, '/endpoints', { url: endpoint.url, eventTypes: ['order.shipped'] })).json()) as { id: string; secret: string };
    const key = `ship-${randomUUID()}`;
    const published = await api(second, '/messages', { eventType: 'order.shipped', payload: { orderId: 'ord_1' } }, key);
    expect(published.status).toBe(201);
    const { id: messageId } = (await published.json()) as { id: string };
    const replayed = await api(first, '/messages', { eventType: 'order.shipped', payload: { orderId: 'ord_1' } }, key);
    expect([replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    await eventually('the endpoint receives the message', () => endpoint.received.length > 0);
    expect(endpoint.received).toHaveLength(1);
    const [received] = endpoint.received;
    expect(received!.headers['webhook-id']).toBe(messageId);
    expect(() => new Webhook(registered.secret).verify(received!.body, received!.headers)).not.toThrow();
    await endpoint.close();
  }, 120_000);

  it('finishes a charge exactly once when the worker running it is SIGKILLed mid-charge', async () => {
    const held = topology.stripe.holdNext('responding');
    const order = orderCreated();
    expect((await deliver(order)).status).toBe(202);
    const release = await held;

    // The worker identity is `<pid>@<host>`: kill the process that holds the charge.
    const { raw } = await topology.client.workflow.getHandle(order.id).describe();
    const identity = raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '';
    const index = topology.workers.findIndex((worker) => identity.startsWith(`${worker.child.pid}@`));
    expect(index).toBeGreaterThanOrEqual(0);
    await topology.killWorker(index);
    release();

    await expectChargedOnce([order]);
    const creates = topology.stripe.requests.filter((request) => request.path === '/v1/payment_intents' && request.idempotencyKey === `${order.id}:charge:1`);
    // The other worker's retry found the charge attempt pending and the PaymentIntent by its metadata.
    expect(creates.map((request) => request.replayed)).toEqual([false]);
    expect(topology.stripe.requests.filter((request) => request.path === '/v1/payment_intents/search')).not.toEqual([]);
    await topology.startWorker(index);
  }, 120_000);

  it('answers 503 while the Temporal server is down during a storm, and every accepted event completes once after it is back', async () => {
    const orders = Array.from({ length: 40 }, () => orderCreated());
    let accepted = 0;
    let sawUnavailable!: () => void;
    const unavailable = new Promise<void>((resolve) => (sawUnavailable = resolve));
    let outage: Promise<void> | undefined;

    const storm = inParallel(orders, 4, (order) =>
      deliverUntilAccepted(order, (status) => {
        if (status === 503) sawUnavailable();
        if (status < 300 && ++accepted === 10) {
          outage = (async () => {
            await topology.stopTemporal();
            await unavailable;
            await topology.startTemporal();
          })();
        }
      }),
    );
    const statuses = await storm;
    await outage;

    expect(statuses.flat()).toContain(503);
    expect(statuses.flat().filter((status) => status >= 300 && status !== 503)).toEqual([]);
    expect(statuses.map((answers) => answers.at(-1)! < 300)).toEqual(orders.map(() => true));
    await expectChargedOnce(orders);
  }, 240_000);

  it('recovers from a PostgreSQL restart without restarting any receiver or worker', async () => {
    const processes = [...topology.workers, ...topology.receivers.map((receiver) => receiver.process)];
    const pids = processes.map((process) => process.child.pid);

    topology.postgres.stop();
    const duringOutage = Array.from({ length: 4 }, () => orderCreated());
    let sawFailure!: () => void;
    const failed = new Promise<void>((resolve) => (sawFailure = resolve));
    const delivered = Promise.all(duringOutage.map((order) => deliverUntilAccepted(order, (status) => status >= 500 && sawFailure())));
    await Promise.race([failed, delivered]);
    topology.postgres.start();
    const answers = await delivered;
    expect(answers.map((statuses) => statuses.at(-1)! < 300)).toEqual([true, true, true, true]);
    // While Temporal cannot reach its database, a delivery is answered 503, never another error.
    expect(answers.flat().filter((status) => status >= 300 && status !== 503)).toEqual([]);

    const afterwards = Array.from({ length: 4 }, () => orderCreated());
    for (const order of afterwards) expect((await deliver(order)).status).toBe(202);
    await expectChargedOnce([...duringOutage, ...afterwards]);

    // The receivers' own database pools (the /v1 API) came back too.
    for (const receiver of topology.receivers) {
      const endpoints = await fetch(`${receiver.url}/v1/endpoints`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
      expect(endpoints.status).toBe(200);
    }
    expect(processes.map((process) => [process.child.pid, process.child.exitCode])).toEqual(pids.map((pid) => [pid, null]));
  }, 240_000);
});
