import { MockActivityEnvironment } from '@temporalio/testing';
import { ProviderKind, type Charge } from '../../contracts';
import { createCustomerActivities } from '../../activities/customers';
import { createStripeActivities } from '../../activities/stripe';
import { storeBody } from '../../src/db/event-bodies';
import { stripeEvents } from '../../src/backfill/stripe';
import { createStripeClient } from '../../src/core/stripe-client';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { customerThin } from '../support/events';
import { GO_TOOL_BUILD_MS } from '../support/go-tools';
import { startStripeMock } from '../support/stripe-mock';

/**
 * Every call our Stripe activities make, checked by Stripe's own stripe-mock against the OpenAPI
 * specification: a parameter Stripe does not take, or a malformed search query, is a 400 there, and
 * our activities turn a 400 into a non-retryable StripeInvalidRequest failure, which fails the test.
 */
let mock: Awaited<ReturnType<typeof startStripeMock>>;
let db: TestDatabase;
beforeAll(async () => {
  mock = await startStripeMock();
  db = await openTestDatabase();
}, GO_TOOL_BUILD_MS);
afterAll(async () => {
  await mock?.stop();
  await db?.drop();
});

const activities = () => createStripeActivities({ db, stripe: createStripeClient('sk_test_123', mock.url) });
const input = (eventId: string) => ({
  source: 'standard',
  eventId,
  idempotencyKey: eventId,
  orderId: 'ord_1',
  amount: 4200,
  currency: 'eur',
  customer: 'cus_1',
  paymentMethod: 'pm_card_visa',
});

it('charges with parameters Stripe accepts (paymentIntents.create, confirmed off-session, with metadata)', async () => {
  const charge: Charge = await new MockActivityEnvironment().run(activities().chargeOrder, input('msg_mock_create'));
  expect(charge.paymentIntentId).toMatch(/^pi_/);
});

it('looks a pending charge up with a search query Stripe accepts before charging', async () => {
  const eventId = "msg_mock_pending_o'brien";
  await db.query(`INSERT INTO charge_attempts (source, event_id, attempt, idempotency_key) VALUES ('standard', $1, 1, $1)`, [eventId]);
  const charge: Charge = await new MockActivityEnvironment().run(activities().chargeOrder, input(eventId));
  expect(charge.paymentIntentId).toMatch(/^pi_/);
  expect((await db.query('SELECT outcome FROM charge_attempts WHERE event_id = $1', [eventId])).rows).toEqual([{ outcome: 'succeeded' }]);
});

it('retries a declined charge by confirming its PaymentIntent with parameters Stripe accepts (paymentIntents.confirm, off-session)', async () => {
  const eventId = 'msg_mock_retry';
  await db.query(`INSERT INTO charge_attempts (source, event_id, attempt, idempotency_key, outcome) VALUES ('standard', $1, 1, $2, 'declined')`, [
    eventId,
    `${eventId}:charge:1`,
  ]);
  const retry = { ...input(eventId), attempt: 2, idempotencyKey: `${eventId}:charge:2`, paymentIntentId: 'pi_123', paymentMethod: 'pm_card_mastercard' };
  const charge: Charge = await new MockActivityEnvironment().run(activities().chargeOrder, retry);
  expect(charge.paymentIntentId).toMatch(/^pi_/);
  expect((await db.query('SELECT attempt, outcome FROM charge_attempts WHERE event_id = $1 ORDER BY attempt', [eventId])).rows).toEqual([
    { attempt: 1, outcome: 'declined' },
    { attempt: 2, outcome: 'succeeded' },
  ]);
});

it('marks a PaymentIntent fulfilled with parameters Stripe accepts (paymentIntents.update)', async () => {
  await expect(
    activities().markPaymentIntentFulfilled({
      source: 'stripe',
      eventId: 'evt_mock_fulfil',
      idempotencyKey: 'evt_mock_fulfil',
      paymentIntentId: 'pi_123',
      orderId: 'ord_1',
    }),
  ).resolves.toBeUndefined();
});

it('lists events for a backfill with parameters Stripe accepts (created window, types, limit)', async () => {
  const stripe = createStripeClient('sk_test_123', mock.url);
  const listed = [];
  for await (const event of stripeEvents(
    stripe,
    { since: new Date(Date.now() - 3_600_000), until: new Date(), types: ['checkout.session.completed', 'invoice.paid'] },
    'stripe',
  ))
    listed.push(event);
  expect(listed.length).toBeGreaterThan(0);
  expect(listed[0]).toMatchObject({ id: expect.stringMatching(/^evt_/), type: expect.any(String), occurredAt: expect.any(String) });
});

it("fetches a thin event's customer with the request Stripe's SDK makes for it (fetchRelatedObject: GET /v1/customers/:id) and stores it", async () => {
  const thin = customerThin('cus_mock_thin');
  const receivedAt = new Date().toISOString();
  const start = {
    flow: 'refreshStripeCustomer',
    input: { source: 'stripe', provider: ProviderKind.STRIPE, id: thin.id, type: 'v1.customer.updated', occurredAt: receivedAt, receivedAt },
    summary: thin.id,
  };
  await storeBody(
    db,
    { source: 'stripe', eventId: thin.id, workflowId: thin.id, provider: ProviderKind.STRIPE, via: 'delivery', receivedAt, start, leaseMs: 0 },
    { raw: Buffer.from(thin.body), contentType: 'application/json', signatureHeaders: {} },
  );
  const { storeCurrentCustomer } = createCustomerActivities({ db, stripe: createStripeClient('sk_test_123', mock.url) });
  expect(await new MockActivityEnvironment().run(storeCurrentCustomer, { source: 'stripe', eventId: thin.id, created: 1_800_000_000 })).toBe(true);
  expect((await db.query('SELECT id, last_event_id FROM customers WHERE id = $1', ['cus_mock_thin'])).rows).toEqual([
    { id: 'cus_mock_thin', last_event_id: thin.id },
  ]);
});
