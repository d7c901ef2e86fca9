import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { approveSignal, rejectSignal, statusQuery, type WebhookEvent } from '../../contracts';
import { fulfilCheckout, fulfilShopifyOrderFlow } from '../../workflows';
import { eraseEvent } from '../../src/db/erasure';
import { EventOperations } from '../../src/temporal/operations';
import { eventually } from '../support/eventually';
import { checkoutCompleted, orderCreated, shopifyOrderPaid, subscriptionEvent, type SignedDelivery } from '../support/events';
import { CATALOG_SECRETS_ENV, githubHeaders, SECRETS, standardHeaders, stripeHeaders } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { ...CATALOG_SECRETS_ENV, REVIEW_THRESHOLD: '100000', REVIEW_TIMEOUT: '1h' } });
});
afterAll(() => stack.close());

const deliver = async (delivery: SignedDelivery) => post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const resultOf = (workflowId: string) => stack.client.workflow.getHandle(workflowId).result();
const rows = async <Row extends object>(sql: string, params: unknown[]) => (await stack.db.query<Row>(sql, params)).rows;
const stripeRequestsFor = (eventId: string) => stack.stripe.requests.filter((request) => request.idempotencyKey?.startsWith(eventId));
const emailsFor = (eventId: string) => stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(eventId));
const ledger = (eventId: string) =>
  rows<{ status: string; step_count: string }>(
    `SELECT status, (SELECT count(*) FROM event_steps s WHERE s.event_id = e.event_id) AS step_count FROM processed_events e WHERE event_id = $1`,
    [eventId],
  );

describe('Stripe checkout.session.completed → fulfilCheckout', () => {
  it('writes the order, marks the PaymentIntent fulfilled with the event ID as key, and emails the customer once', async () => {
    const delivery = checkoutCompleted({ orderId: `ord_${randomUUID()}`, email: 'ada@example.com', paymentIntent: 'pi_checkout_1' });
    expect((await deliver(delivery)).status).toBe(202);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });

    const [order] = await rows<{ id: string; status: string; payment_intent_id: string; amount: string; event_id: string }>(
      'SELECT * FROM orders WHERE event_id = $1',
      [delivery.id],
    );
    expect(order).toMatchObject({ status: 'fulfilled', payment_intent_id: 'pi_checkout_1', amount: '4200' });

    expect(stripeRequestsFor(delivery.id)).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/payment_intents/pi_checkout_1',
        idempotencyKey: delivery.id,
        params: { metadata: { fulfilled: 'true', order_id: order!.id } },
      }),
    ]);
    expect(emailsFor(delivery.id)).toEqual([
      expect.objectContaining({ idempotencyKey: delivery.id, to: ['ada@example.com'], subject: `Order ${order!.id} confirmed` }),
    ]);
    expect(await ledger(delivery.id)).toEqual([{ status: 'completed', step_count: '3' }]);
  });

  it('three deliveries of one event, and 20 concurrent copies of another: one row, one Stripe update, one email each', async () => {
    const sequential = checkoutCompleted();
    const concurrent = checkoutCompleted();
    for (let i = 0; i < 3; i++) await deliver(sequential);
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => deliver(concurrent)))).map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array(18).fill(200), 202].sort());

    for (const delivery of [sequential, concurrent]) {
      await resultOf(delivery.id);
      expect(await rows('SELECT id FROM orders WHERE event_id = $1', [delivery.id])).toHaveLength(1);
      expect(stripeRequestsFor(delivery.id)).toHaveLength(1);
      expect(emailsFor(delivery.id)).toHaveLength(1);
    }
  });
});

describe('Shopify orders → fulfilShopifyOrder', () => {
  it('records the order and emails the customer once, keyed by the Shopify event ID, with no Stripe call', async () => {
    const delivery = shopifyOrderPaid();
    expect((await deliver(delivery)).status).toBe(202);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled', source: 'shopify', type: 'orders/paid' });
    expect((await stack.client.workflow.getHandle(delivery.id).describe()).type).toBe(fulfilShopifyOrderFlow.name);

    expect(await rows('SELECT id, status, amount, currency, payment_intent_id FROM orders WHERE event_id = $1', [delivery.id])).toEqual([
      { id: `shopify-${delivery.orderId}`, status: 'fulfilled', amount: '4200', currency: 'eur', payment_intent_id: null },
    ]);
    expect(stripeRequestsFor(delivery.id)).toEqual([]);
    expect(emailsFor(delivery.id)).toEqual([
      expect.objectContaining({
        idempotencyKey: delivery.id,
        to: ['ada@example.com'],
        subject: `Order #${delivery.orderId} confirmed`,
        text: expect.stringContaining('of 42.00 EUR'),
      }),
    ]);
    expect(await ledger(delivery.id)).toEqual([{ status: 'completed', step_count: '2' }]);
  });

  it('one event sent to two subscriptions and redelivered 10 times at once: one order, one email', async () => {
    const event = shopifyOrderPaid();
    const copies = [event, ...Array.from({ length: 10 }, () => shopifyOrderPaid({ eventId: event.id, orderId: event.orderId, webhookId: randomUUID() }))];
    const statuses = (await Promise.all(copies.map(deliver))).map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
    await resultOf(event.id);
    expect(await rows('SELECT id FROM orders WHERE event_id = $1', [event.id])).toHaveLength(1);
    expect(emailsFor(event.id)).toHaveLength(1);
  });

  it('one paid order as orders/updated (E1), then the same signed bytes as orders/paid (E2): fulfilled once, by E1', async () => {
    const updated = shopifyOrderPaid({ topic: 'orders/updated' });
    const paid = shopifyOrderPaid({ topic: 'orders/paid', orderId: updated.orderId });
    expect(paid.body).toBe(updated.body);
    expect(await deliver(updated)).toMatchObject({ status: 202, json: { status: 'started' } });
    expect(await resultOf(updated.id)).toMatchObject({ outcome: 'fulfilled', type: 'orders/updated' });
    // Shopify's topic is unsigned, so these bytes are an event of their own under another topic.
    expect(await deliver(paid)).toMatchObject({ status: 202, json: { status: 'started' } });
    // The same order at the same updated_at: not newer than the state applied, so superseded.
    expect(await resultOf(paid.id)).toMatchObject({ outcome: 'superseded', type: 'orders/paid', entity: { key: String(updated.orderId), after: updated.id } });

    expect(await rows('SELECT status, fulfilled_by FROM orders WHERE id = $1', [`shopify-${updated.orderId}`])).toEqual([
      { status: 'fulfilled', fulfilled_by: updated.id },
    ]);
    const emails = stack.resend.emails.filter((email) => email.subject === `Order #${updated.orderId} confirmed`);
    expect(emails).toEqual([expect.objectContaining({ idempotencyKey: updated.id })]);
  });

  it('an order whose signed body is not paid is recorded as such, whatever the topic says', async () => {
    const pending = shopifyOrderPaid({ topic: 'orders/paid', financialStatus: 'pending' });
    expect((await deliver(pending)).status).toBe(202);
    expect(await resultOf(pending.id)).toMatchObject({ outcome: 'not-paid' });
    expect(await rows('SELECT id FROM orders WHERE id = $1', [`shopify-${pending.orderId}`])).toEqual([]);
    expect(emailsFor(pending.id)).toEqual([]);
  });

  it('the same bytes under the same topic and a new event ID: 200 duplicate naming the first, never started, and a replay refusal', async () => {
    const first = shopifyOrderPaid({ topic: 'orders/paid' });
    const replay = shopifyOrderPaid({ topic: 'orders/paid', orderId: first.orderId });
    expect((await deliver(first)).status).toBe(202);
    expect(await deliver(replay)).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: replay.id, replayOf: first.id } });
    await expect(stack.client.workflow.getHandle(replay.id).describe()).rejects.toThrow(WorkflowNotFoundError);
    await eventually('the replay is listed among refused deliveries', async () =>
      (
        await rows<{ reason: string; status: number; detail: string }>(
          "SELECT reason, status, detail FROM refused_deliveries WHERE source = 'shopify' AND detail LIKE $1",
          [`%${replay.id}%`],
        )
      ).some((row) => row.reason === 'replay' && row.status === 200 && row.detail.includes(first.id)),
    );
  });
});

describe('Standard Webhooks order.created → chargeOrder', () => {
  it('charges off-session with `<event ID>:charge:1` as Stripe idempotency key, marks the order paid and emails a receipt', async () => {
    const delivery = orderCreated({ amount: 4200 });
    await deliver(delivery);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'charged' });

    const [create] = stripeRequestsFor(delivery.id);
    expect(create).toMatchObject({
      path: '/v1/payment_intents',
      idempotencyKey: `${delivery.id}:charge:1`,
      params: { amount: '4200', currency: 'eur', customer: 'cus_test_1', payment_method: 'pm_card_visa', confirm: 'true', off_session: 'true' },
    });
    const charges = stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id);
    expect(charges).toHaveLength(1);
    expect(await rows('SELECT status, payment_intent_id FROM orders WHERE id = $1', [delivery.orderId])).toEqual([
      { status: 'paid', payment_intent_id: charges[0]!.id },
    ]);
    expect(emailsFor(delivery.id)).toEqual([
      expect.objectContaining({ idempotencyKey: `${delivery.id}:email:receipt`, subject: `Receipt for order ${delivery.orderId}` }),
    ]);

    // What the Web UI shows on each activity of the run.
    const { events } = await stack.client.workflow.getHandle(delivery.id).fetchHistory();
    const summaries = events!
      .filter((event) => event.activityTaskScheduledEventAttributes && event.userMetadata?.summary)
      .map((event) => defaultPayloadConverter.fromPayload(event.userMetadata!.summary!));
    expect(summaries).toEqual(['charge 42.00 EUR to cus_test_1', `email {/data/email}: Receipt for order ${delivery.orderId}`]);
  });

  it('retries a Stripe 500 with the same key and charges once', async () => {
    const delivery = orderCreated();
    stack.stripe.failNext(500);
    await deliver(delivery);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'charged' });
    const attempts = stripeRequestsFor(delivery.id).filter((request) => request.path === '/v1/payment_intents');
    expect(attempts.map((request) => [request.idempotencyKey, request.injectedStatus])).toEqual([
      [`${delivery.id}:charge:1`, 500],
      [`${delivery.id}:charge:1`, undefined],
    ]);
    expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  });

  it('does not retry a decline by itself: one Stripe call, the order payment_failed, one failure email, and the workflow waits for retryPayment', async () => {
    const delivery = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
    await deliver(delivery);
    const handle = stack.client.workflow.getHandle(delivery.id);
    await eventually('the order waits for retryPayment', async () => (await handle.query(statusQuery)).awaiting !== null);

    expect(stripeRequestsFor(delivery.id)).toHaveLength(1);
    expect(await rows('SELECT status FROM orders WHERE id = $1', [delivery.orderId])).toEqual([{ status: 'payment_failed' }]);
    expect(emailsFor(delivery.id)).toEqual([expect.objectContaining({ idempotencyKey: `${delivery.id}:email:payment-failed:1` })]);
    expect((await ledger(delivery.id))[0]!.status).toBe('processing');
    expect(await rows('SELECT attempt, outcome, failure FROM charge_attempts WHERE event_id = $1', [delivery.id])).toEqual([
      {
        attempt: 1,
        outcome: 'declined',
        failure: {
          type: 'CardDeclined',
          message: 'Your card was declined.',
          details: expect.objectContaining({ code: 'card_declined', declineCode: 'generic_decline' }),
        },
      },
    ]);

    // A redelivery is still a duplicate (the engine is the dedupe) and says the event is running.
    expect((await deliver(delivery)).json).toEqual({ status: 'duplicate', eventId: delivery.id, workflowId: delivery.id, state: 'running' });
    expect(stripeRequestsFor(delivery.id)).toHaveLength(1);
    await handle.terminate('the test is done with it');
  });

  it('records a non-retryable failure in the ledger as failed, not processing', async () => {
    const body = JSON.stringify({ type: 'order.created', timestamp: new Date().toISOString(), data: { orderId: 'ord_incomplete', amount: 4200 } });
    const id = `msg_${randomUUID()}`;
    expect((await post(`${stack.url}/webhooks/standard`, standardHeaders(body, SECRETS.standard, { id }), body)).status).toBe(202);
    await expect(resultOf(id)).rejects.toThrow(WorkflowFailedError);
    expect(await rows('SELECT status, outcome FROM processed_events WHERE event_id = $1', [id])).toEqual([
      {
        status: 'failed',
        outcome: {
          type: 'InvalidOrder',
          errorClass: 'InvalidOrder',
          failure: 'order.created is missing or has invalid: currency, customer, paymentMethod, email',
        },
      },
    ]);
  });

  it('holds an order at or above REVIEW_THRESHOLD until approve, then charges it', async () => {
    const delivery = orderCreated({ amount: 250000 });
    await deliver(delivery);
    const handle = stack.client.workflow.getHandle(delivery.id);
    await eventually('the order is held for review', async () => (await handle.query(statusQuery)).waitingFor !== null);
    expect(await handle.query(statusQuery)).toMatchObject({ waitingFor: 'approve or reject signal (up to 1h)', outcome: null });
    expect(stripeRequestsFor(delivery.id)).toEqual([]);
    expect(await rows('SELECT status FROM orders WHERE id = $1', [delivery.orderId])).toEqual([{ status: 'awaiting_review' }]);

    await handle.signal(approveSignal, { by: 'ops' });
    expect(await handle.result()).toMatchObject({ outcome: 'charged' });
    expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  });

  it('cancels a held order on reject, charges nothing and emails the customer', async () => {
    const delivery = orderCreated({ amount: 250000 });
    await deliver(delivery);
    const handle = stack.client.workflow.getHandle(delivery.id);
    await handle.signal(rejectSignal, { reason: 'suspected fraud' });
    expect(await handle.result()).toMatchObject({ outcome: 'cancelled' });
    expect(stripeRequestsFor(delivery.id)).toEqual([]);
    expect(await rows('SELECT status FROM orders WHERE id = $1', [delivery.orderId])).toEqual([{ status: 'cancelled' }]);
    expect(emailsFor(delivery.id)).toEqual([expect.objectContaining({ text: expect.stringContaining('rejected: suspected fraud') })]);
  });
});

describe('GitHub issues.opened and ping → notifyGitHub', () => {
  it('emails NOTIFY_EMAIL once, keyed by the delivery ID', async () => {
    const delivery = randomUUID();
    const body = JSON.stringify({
      action: 'opened',
      issue: { number: 7, title: 'Double charge', html_url: 'https://github.com/o/r/issues/7', user: { login: 'octocat' } },
      repository: { full_name: 'o/r' },
    });
    const headers = await githubHeaders(body, SECRETS.github, { delivery, event: 'issues' });
    await post(`${stack.url}/webhooks/github`, headers, body);
    await post(`${stack.url}/webhooks/github`, headers, body);
    expect(await resultOf(delivery)).toMatchObject({ outcome: 'notified' });
    expect(emailsFor(delivery)).toEqual([
      expect.objectContaining({ idempotencyKey: delivery, to: ['ops@example.com'], subject: '[o/r] Issue #7 opened: Double charge' }),
    ]);
  });

  it('stores and starts nothing for a signed body replayed under a new delivery ID (GitHub does not sign it), erased or not; a redelivery under the first ID stays a duplicate', async () => {
    const first = randomUUID();
    const body = JSON.stringify({ action: 'opened', issue: { number: 8, title: `Replay ${first}` }, repository: { full_name: 'o/r' } });
    const headers = await githubHeaders(body, SECRETS.github, { delivery: first, event: 'issues' });
    await post(`${stack.url}/webhooks/github`, headers, body);
    expect(await resultOf(first)).toMatchObject({ outcome: 'notified' });

    const replays = [randomUUID(), randomUUID()];
    const replay = (id: string) => post(`${stack.url}/webhooks/github`, { ...headers, 'x-github-delivery': id }, body);
    for (const id of replays) expect(await replay(id)).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: id, replayOf: first } });
    expect((await post(`${stack.url}/webhooks/github`, headers, body)).json).toMatchObject({ status: 'duplicate', eventId: first });
    // Once the first is erased, its body is not stored again under a new ID either.
    await eraseEvent(stack.db, first, { by: 'test', reason: 'replay of an erased body' });
    const afterErasure = randomUUID();
    expect(await replay(afterErasure)).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: afterErasure, replayOf: first } });

    const ids = [first, ...replays, afterErasure];
    for (const id of ids.slice(1)) await expect(stack.client.workflow.getHandle(id).describe()).rejects.toThrow(WorkflowNotFoundError);
    expect(await rows('SELECT event_id, body IS NULL AS erased FROM event_bodies WHERE event_id = ANY($1)', [ids])).toEqual([
      { event_id: first, erased: true },
    ]);
    expect(stack.resend.emails.filter((email) => email.subject.includes(`Replay ${first}`))).toHaveLength(1);
    expect(await rows('SELECT event_id FROM processed_events WHERE event_id = ANY($1)', [ids])).toEqual([{ event_id: first }]);
  });
});

describe('other event types', () => {
  it('are recorded in the ledger as ignored', async () => {
    const delivery = checkoutCompleted();
    const body = delivery.body.replace('checkout.session.completed', 'invoice.paid');
    await post(`${stack.url}/webhooks/stripe`, stripeHeaders(body, SECRETS.stripe), body);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'ignored', type: 'invoice.paid' });
    expect(await ledger(delivery.id)).toEqual([{ status: 'ignored', step_count: '0' }]);
  });
});

describe('resets and redeliveries', () => {
  it('a reset of a completed workflow to its first workflow task re-runs the steps with no new charge, email or row', async () => {
    const delivery = orderCreated();
    await deliver(delivery);
    await resultOf(delivery.id);
    // Requests, not just effects: the ledger must stop the calls themselves, not lean on the APIs' idempotency.
    const before = { stripe: stack.stripe.requests.length, charges: stack.stripe.charges().length, email: stack.resend.requests.length };

    const { runId: newRunId } = await new EventOperations(stack.client, { uiUrl: 'http://ui' }).reset(delivery.id, 'first', 'test: re-run after a fix');
    const rerun = stack.client.workflow.getHandle(delivery.id, newRunId);
    expect(await rerun.result()).toMatchObject({ outcome: 'charged' });

    expect({ stripe: stack.stripe.requests.length, charges: stack.stripe.charges().length, email: stack.resend.requests.length }).toEqual(before);
    expect(await rows('SELECT id FROM orders WHERE event_id = $1', [delivery.id])).toHaveLength(1);
  });

  it('a second run chain with the same ID (redelivery after retention) completes as duplicate with no side effect', async () => {
    const delivery = checkoutCompleted();
    await deliver(delivery);
    await resultOf(delivery.id);
    const before = { stripe: stack.stripe.requests.length, email: stack.resend.requests.length };
    const first = stack.client.workflow.getHandle(delivery.id);
    const firstRunId = (await first.describe()).runId;
    const { events } = await first.fetchHistory();
    const event = defaultPayloadConverter.fromPayload<WebhookEvent>(events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!);

    // What the receiver would start once retention has dropped the first run: same ID, new run chain.
    const second = await stack.client.workflow.start(fulfilCheckout, {
      workflowId: delivery.id,
      taskQueue: stack.taskQueue,
      args: [event],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    expect(second.firstExecutionRunId).not.toBe(firstRunId);
    expect(await second.result()).toMatchObject({ outcome: 'duplicate' });
    expect({ stripe: stack.stripe.requests.length, email: stack.resend.requests.length }).toEqual(before);
    expect(await rows('SELECT id FROM orders WHERE event_id = $1', [delivery.id])).toHaveLength(1);
  });
});

describe("Stripe customer.subscription.* → the subscription's turns, newest first", () => {
  it('stores the newest state when events arrive newest-first: the older ones are superseded', async () => {
    const subscriptionId = `sub_${randomUUID()}`;
    const newest = subscriptionEvent(subscriptionId, 'updated', 1_700_000_300, 'past_due');
    const middle = subscriptionEvent(subscriptionId, 'updated', 1_700_000_200, 'active');
    const oldest = subscriptionEvent(subscriptionId, 'created', 1_700_000_100, 'incomplete');
    const outcomes = [];
    for (const delivery of [newest, middle, oldest]) {
      await deliver(delivery);
      outcomes.push(await resultOf(delivery.id));
    }
    expect(outcomes).toMatchObject([
      { outcome: 'stored', entity: { key: subscriptionId, after: null } },
      { outcome: 'superseded', entity: { key: subscriptionId, after: newest.id } },
      { outcome: 'superseded', entity: { key: subscriptionId, after: newest.id } },
    ]);
    expect(await rows('SELECT status, last_event_id FROM subscriptions WHERE id = $1', [subscriptionId])).toEqual([
      { status: 'past_due', last_event_id: newest.id },
    ]);
    const held = await rows<{ event_id: string; reader_pending: boolean }>('SELECT event_id, reader_pending FROM event_bodies WHERE event_id = ANY($1)', [
      [newest.id, middle.id, oldest.id],
    ]);
    expect(held.map((row) => row.reader_pending)).toEqual([false, false, false]);
  });

  it('two events of one second: the one with the greater event ID is the newer, as the subscriptions table orders them', async () => {
    const subscriptionId = `sub_${randomUUID()}`;
    const [low, high] = [
      subscriptionEvent(subscriptionId, 'created', 1_700_000_100, 'incomplete'),
      subscriptionEvent(subscriptionId, 'updated', 1_700_000_100, 'active'),
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    await deliver(high!);
    expect(await resultOf(high!.id)).toMatchObject({ outcome: 'stored' });
    await deliver(low!);
    expect(await resultOf(low!.id)).toMatchObject({ outcome: 'superseded' });
    expect(await rows('SELECT last_event_id FROM subscriptions WHERE id = $1', [subscriptionId])).toEqual([{ last_event_id: high!.id }]);
  });
});
