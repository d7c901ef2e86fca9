import { MockActivityEnvironment } from '@temporalio/testing';
import { retryPaymentSignal, statusQuery, type EventProgress } from '../../contracts';
import { createStripeActivities } from '../../activities/stripe';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { createStripeClient } from '../../src/core/stripe-client';
import { eventually } from '../support/eventually';
import { orderCreated, type SignedDelivery } from '../support/events';
import { runCli } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * A declined order waits for `retryPayment` (the customer's new payment method) and is charged
 * again under a new key, `<event>:charge:<attempt>`, confirming the declined PaymentIntent. The real
 * dev server, a worker, PostgreSQL, the Stripe stand-in (402 for pm_card_chargeDeclined) through the
 * Stripe SDK, and the `durable-webhooks events` CLI and `/admin` API as operators use them.
 */
const ADMIN_TOKEN = 'admin-test-token-0123456789abcdef0123456789';
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { REVIEW_THRESHOLD: '100000', ADMIN_TOKEN } });
});
afterAll(() => stack.close());

const cli = (...args: string[]) =>
  runCli(['events', ...args], {
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    TEMPORAL_UI_URL: 'http://ui.test',
    DATABASE_URL: stack.workerEnv.DATABASE_URL,
  });
const deliver = (delivery: SignedDelivery) => post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const admin = (path: string, body: unknown) =>
  fetch(`${stack.url}/admin${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const handle = (eventId: string) => stack.client.workflow.getHandle(eventId);
const charges = (eventId: string) => stack.stripe.charges().filter((intent) => intent.metadata.event_id === eventId);
const chargeCalls = (eventId: string) =>
  stack.stripe.requests
    .filter((request) => request.method === 'POST' && request.idempotencyKey?.startsWith(`${eventId}:charge:`))
    .map((request) => [request.path.replace(/pi_\w+/, 'pi'), request.idempotencyKey]);
const emailsFor = (eventId: string) => stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(eventId)).map((email) => email.idempotencyKey);
const attempts = async (eventId: string) =>
  (await stack.db.query('SELECT attempt, idempotency_key, payment_method, outcome FROM charge_attempts WHERE event_id = $1 ORDER BY attempt', [eventId])).rows;

/** Delivers an order whose card is declined, and waits until it waits for `retryPayment`. */
async function declinedOrder(amount = 4200): Promise<{ id: string; orderId: string; status: EventProgress }> {
  const delivery = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD, amount });
  expect((await deliver(delivery)).status).toBe(202);
  if (amount >= 100000) {
    await eventually('the order is held for review', async () => (await handle(delivery.id).query(statusQuery)).awaiting !== null);
    expect((await admin(`/events/${delivery.id}/signals/approve`, { by: 'ops' })).status).toBe(202);
  }
  const status = await waitingForRetry(delivery.id, 2);
  return { id: delivery.id, orderId: delivery.orderId, status };
}

/** The admin API's answer to a `retryPayment` the event is not waiting for: 409, nothing sent. */
async function expectNotAwaited(response: Response, eventId: string): Promise<void> {
  expect(response.status).toBe(409);
  expect(await response.json()).toMatchObject({
    type: 'urn:durable-webhooks:problem:signal-not-awaited',
    detail: expect.stringMatching(new RegExp(`^Event ${eventId} is not waiting for retryPayment.*Nothing was sent\\.$`)),
  });
}

async function waitingForRetry(eventId: string, attempt: number): Promise<EventProgress> {
  let status!: EventProgress;
  await eventually(`the order waits for retryPayment (attempt ${attempt})`, async () => {
    status = await handle(eventId).query(statusQuery);
    return status.awaiting?.signalFields?.attempt === attempt;
  });
  return status;
}

it('a decline waits for retryPayment; the CLI retry with pm_card_visa charges once, confirming the declined PaymentIntent, and sends the receipt', async () => {
  const startedAt = Date.now();
  const order = await declinedOrder();

  // What operators see while it waits: the status query, `events show`, and the Web UI's current details.
  const until = Date.parse(order.status.awaiting!.until!);
  expect(until - startedAt).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);
  expect(until - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
  expect(order.status).toMatchObject({
    stepsDone: ['claim', 'charge declined (attempt 1)'],
    waitingFor: "retryPayment signal with the customer's new payment method, for charge attempt 2",
    awaiting: { signals: ['retryPayment'], until: order.status.awaiting!.until, signalFields: { attempt: 2 } },
  });
  const shown = await cli('show', order.id);
  expect(shown.output).toContain(
    `Waiting    retryPayment signal with the customer's new payment method, for charge attempt 2, until ${order.status.awaiting!.until}`,
  );
  expect(shown.output).toMatch(new RegExp(`Charge 1 +declined: Your card was declined\\.  \\(key ${order.id}:charge:1, pm_card_chargeDeclined, `));
  const { currentDetails } = await handle(order.id).query<{ currentDetails: string }>('__temporal_workflow_metadata');
  expect(currentDetails).toContain(
    `**Waiting for:** retryPayment signal with the customer's new payment method, for charge attempt 2, until ${order.status.awaiting!.until}`,
  );
  expect(emailsFor(order.id)).toEqual([`${order.id}:email:payment-failed:1`]);
  const failed = stack.resend.emails.find((email) => email.idempotencyKey === `${order.id}:email:payment-failed:1`)!;
  expect(failed.text).toContain(`Please update your payment method by ${order.status.awaiting!.until!.slice(0, 10)}`);
  expect((await stack.db.query('SELECT status FROM orders WHERE id = $1', [order.orderId])).rows).toEqual([{ status: 'payment_failed' }]);

  expect(await cli('signal', order.id, 'retryPayment', '--data', '{"paymentMethod":"pm_card_visa","by":"support"}', '--json')).toMatchObject({ code: 0 });
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });

  expect(chargeCalls(order.id)).toEqual([
    ['/v1/payment_intents', `${order.id}:charge:1`],
    ['/v1/payment_intents/pi/confirm', `${order.id}:charge:2`],
  ]);
  const [intent] = charges(order.id);
  expect(charges(order.id)).toHaveLength(1);
  expect(intent).toMatchObject({ payment_method: 'pm_card_visa', status: 'succeeded' });
  expect(await attempts(order.id)).toEqual([
    { attempt: 1, idempotency_key: `${order.id}:charge:1`, payment_method: DECLINED_PAYMENT_METHOD, outcome: 'declined' },
    { attempt: 2, idempotency_key: `${order.id}:charge:2`, payment_method: 'pm_card_visa', outcome: 'succeeded' },
  ]);
  expect((await stack.db.query('SELECT status, payment_intent_id FROM orders WHERE id = $1', [order.orderId])).rows).toEqual([
    { status: 'paid', payment_intent_id: intent!.id },
  ]);
  expect(emailsFor(order.id)).toEqual([`${order.id}:email:payment-failed:1`, `${order.id}:email:receipt`]);
  expect((await handle(order.id).query(statusQuery)).stepsDone).toEqual([
    'claim',
    'charge declined (attempt 1)',
    'retryPayment (attempt 2, by support)',
    'charge',
    'email:receipt',
  ]);

  // Once it is not waiting, a retry is refused before anything is sent; so is a malformed one.
  expect(await cli('signal', order.id, 'retryPayment')).toMatchObject({
    code: 1,
    error: expect.stringContaining(`Event ${order.id} is not waiting for retryPayment`),
  });
  await expectNotAwaited(await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' }), order.id);
  expect(await cli('signal', order.id, 'retryPayment', '--data', '{"paymentMethod":"4242 4242 4242 4242"}')).toMatchObject({
    code: 1,
    error: expect.stringContaining('paymentMethod must be a Stripe payment method ID'),
  });
}, 90_000);

it('two concurrent retryPayment requests for one decline make one charge', async () => {
  const order = await declinedOrder();
  const sent = await Promise.all([
    admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' }),
    admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_mastercard' }),
  ]);
  // Both reach the wait (202; the workflow takes the first), or one arrives once the wait is over and
  // is refused before anything is sent (409). Which of the two depends on timing; the charge does not.
  const statuses = sent.map((response) => response.status).sort();
  expect([
    [202, 202],
    [202, 409],
  ]).toContainEqual(statuses);
  for (const refused of sent.filter((response) => response.status === 409)) await expectNotAwaited(refused, order.id);
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });
  expect(charges(order.id)).toHaveLength(1);
  expect(chargeCalls(order.id)).toEqual([
    ['/v1/payment_intents', `${order.id}:charge:1`],
    ['/v1/payment_intents/pi/confirm', `${order.id}:charge:2`],
  ]);
  expect((await attempts(order.id)).map((row) => row.outcome)).toEqual(['declined', 'succeeded']);
});

it('a retry that is declined again tells the customer again and waits for attempt 3; one Stripe refuses waits without an email', async () => {
  const order = await declinedOrder();
  expect((await admin(`/events/${order.id}/signals/retryPayment`, {})).status).toBe(202);
  await waitingForRetry(order.id, 3);
  expect(emailsFor(order.id)).toEqual([`${order.id}:email:payment-failed:1`, `${order.id}:email:payment-failed:2`]);

  expect((await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_does_not_exist' })).status).toBe(202);
  const refused = await waitingForRetry(order.id, 4);
  expect(refused.waitingFor).toBe(
    "retryPayment signal with the customer's new payment method, for charge attempt 4, since Stripe refused attempt 3: No such PaymentMethod: 'pm_does_not_exist'",
  );
  // The window runs from the first decline: every wait ends at the same time.
  expect(refused.awaiting!.until).toBe(order.status.awaiting!.until);
  expect(emailsFor(order.id)).toHaveLength(2);

  expect((await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' })).status).toBe(202);
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });
  expect((await attempts(order.id)).map((row) => [row.attempt, row.outcome])).toEqual([
    [1, 'declined'],
    [2, 'declined'],
    [3, 'refused'],
    [4, 'succeeded'],
  ]);
  expect(charges(order.id)).toHaveLength(1);
});

it('a held order that is approved and then declined waits for a retry too (REVIEW_THRESHOLD composes)', async () => {
  const order = await declinedOrder(150_000);
  expect(order.status.stepsDone).toEqual(['claim', 'approved', 'charge declined (attempt 1)']);
  expect((await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' })).status).toBe(202);
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });
  expect(charges(order.id)).toEqual([expect.objectContaining({ amount: 150_000 })]);
});

it('a reset to the first workflow task after a successful retry charges nothing and emails no one again', async () => {
  const order = await declinedOrder();
  expect((await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' })).status).toBe(202);
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });
  const before = { stripe: stack.stripe.requests.length, emails: emailsFor(order.id) };

  const reset = await cli('reset', order.id, '--to', 'first', '--reason', 'replay the order', '--json');
  expect(reset).toMatchObject({ code: 0 });
  const { runId } = JSON.parse(reset.output) as { runId: string };
  // The re-applied retryPayment answers the same decline: the same attempts, keys and results from the ledger.
  expect(await stack.client.workflow.getHandle(order.id, runId).result()).toMatchObject({ outcome: 'charged' });
  expect(stack.stripe.requests.length).toBe(before.stripe);
  expect(emailsFor(order.id)).toEqual(before.emails);
  expect(charges(order.id)).toHaveLength(1);
  expect((await attempts(order.id)).map((row) => row.outcome)).toEqual(['declined', 'succeeded']);
});

describe('the ledger', () => {
  it('allows one successful charge per event: a later attempt gets that charge back without calling Stripe, and the database refuses a second success', async () => {
    const order = await declinedOrder();
    expect((await admin(`/events/${order.id}/signals/retryPayment`, { paymentMethod: 'pm_card_visa' })).status).toBe(202);
    await handle(order.id).result();
    const [intent] = charges(order.id);

    const stripeCalls = stack.stripe.requests.length;
    const { chargeOrder } = createStripeActivities({ db: stack.db, stripe: createStripeClient('sk_test_ledger', stack.stripe.url) });
    const input = {
      source: 'standard',
      eventId: order.id,
      orderId: order.orderId,
      amount: 4200,
      currency: 'eur',
      customer: 'cus_test_1',
      paymentMethod: 'pm_card_visa',
    };
    const third = await new MockActivityEnvironment().run(chargeOrder, {
      ...input,
      attempt: 3,
      idempotencyKey: `${order.id}:charge:3`,
      paymentIntentId: intent!.id,
    });
    expect(third).toEqual({ paymentIntentId: intent!.id, status: 'succeeded' });
    expect(stack.stripe.requests.length).toBe(stripeCalls);
    expect(await attempts(order.id)).toHaveLength(2);

    await expect(
      stack.db.query(`INSERT INTO charge_attempts (source, event_id, attempt, idempotency_key, outcome) VALUES ('standard', $1, 9, 'k', 'succeeded')`, [
        order.id,
      ]),
    ).rejects.toThrow(/charge_attempts_one_open_or_paid/);
  });
});

it('a retryPayment sent around our tools, naming no attempt, answers the decline it finds waiting', async () => {
  const order = await declinedOrder();
  await handle(order.id).signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa' });
  expect(await handle(order.id).result()).toMatchObject({ outcome: 'charged' });
  expect((await attempts(order.id)).map((row) => [row.attempt, row.outcome])).toEqual([
    [1, 'declined'],
    [2, 'succeeded'],
  ]);
});
