import { MockActivityEnvironment, TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { type Activities, type ChargeInput } from '../../contracts';
import { chargeOrder } from '../../workflows';
import { createLedgerActivities } from '../../activities/ledger';
import { createOrderActivities } from '../../activities/orders';
import { createStripeActivities } from '../../activities/stripe';
import type { Database } from '../../src/db/database';
import { startStripeStandIn, type StripeStandIn } from '../../src/dev/stripe-stand-in';
import { createStripeClient } from '../../src/core/stripe-client';
import { timeSkippingEnvironment } from '../support/time-skipping';
import { openTestDatabase, sqlOf, type TestDatabase } from '../support/database';
import { workflowSinks } from '../../src/temporal/worker';
import { orderCreatedEvent } from '../support/events';
import { workflowBundle } from '../support/stack';

/**
 * The 24-hour key guard covers resets too. Stripe charges, but the ledger cannot record it for the
 * 23 hours the activity retries (skipped on the time-skipping server); the event fails. A day later
 * Stripe has forgotten the key, the ledger is back, and an operator resets the event, which runs the
 * charge activity again with the same input: the attempt, pending since the first call, finds the
 * PaymentIntent by its metadata instead of charging again. The test server does not implement
 * ResetWorkflowExecution, so the re-run is the activity called with the input from the history.
 * Real activities, PostgreSQL and the Stripe stand-in through the Stripe SDK.
 */
let env: TestWorkflowEnvironment;
let stripe: StripeStandIn;
let db: TestDatabase;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
  stripe = await startStripeStandIn();
  db = await openTestDatabase();
});
afterAll(async () => {
  await env?.teardown();
  await stripe?.close();
  await db?.drop();
});

const event = orderCreatedEvent('msg_recovery_1', { orderId: 'ord_recovery', amount: 4200 });

it('after the key expired, a reset finds the charge a pending step made instead of charging twice', async () => {
  let ledgerDown = true;
  // The ledger accepts everything but the charge step's completion while it is "down".
  const flaky: Database = {
    ...db,
    query: async (sql, params) => {
      if (ledgerDown && sqlOf(sql).startsWith('UPDATE charge_attempts') && params?.[3] === 'succeeded') throw new Error('ledger unavailable');
      return db.query(sql, params);
    },
  };
  const emails: string[] = [];
  const activities: Partial<Activities> = {
    ...createLedgerActivities({ db }),
    ...createOrderActivities({ db }),
    ...createStripeActivities({ db: flaky, stripe: createStripeClient('sk_test_recovery', stripe.url) }),
    sendEmail: async ({ step }) => ({ messageId: String(emails.push(step)) }),
    flowSettings: async () => ({ reviewThreshold: null, reviewTimeout: '24h', notifyEmail: null }),
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'charge-recovery',
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
  });
  const charges = () => stripe.charges().filter((intent) => intent.metadata.event_id === event.id);
  let chargeInput!: ChargeInput;

  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(chargeOrder, { workflowId: event.id, taskQueue: 'charge-recovery', args: [event] });
    await expect(handle.result()).rejects.toThrow();
    expect(charges()).toHaveLength(1);
    expect((await db.query('SELECT attempt, outcome FROM charge_attempts WHERE event_id = $1', [event.id])).rows).toEqual([{ attempt: 1, outcome: 'pending' }]);

    const { events } = await handle.fetchHistory();
    const scheduled = events!.find((entry) => entry.activityTaskScheduledEventAttributes?.activityType?.name === 'chargeOrder')!;
    chargeInput = defaultPayloadConverter.fromPayload<ChargeInput>(scheduled.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
  });

  // A day later: Stripe no longer knows the key; the ledger works again; the reset re-runs the charge.
  stripe.forgetIdempotencyKeys();
  ledgerDown = false;
  const searchesBefore = stripe.requests.filter((request) => request.path === '/v1/payment_intents/search').length;
  const charge = await new MockActivityEnvironment().run(activities.chargeOrder!, chargeInput);

  expect(charges()).toHaveLength(1);
  expect(charge).toEqual({ paymentIntentId: charges()[0]!.id, status: 'succeeded' });
  expect(stripe.requests.filter((request) => request.path === '/v1/payment_intents/search').length).toBe(searchesBefore + 1);
  expect((await db.query('SELECT outcome, payment_intent_id FROM charge_attempts WHERE event_id = $1', [event.id])).rows).toEqual([
    { outcome: 'succeeded', payment_intent_id: charges()[0]!.id },
  ]);
  expect(emails).toEqual([]);
});
