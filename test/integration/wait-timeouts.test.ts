import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ProviderKind, type Activities, type WebhookEvent } from '../../contracts';
import { createWaitActivities } from '../../activities/waits';
import { Router } from '../../src/flows';
import { startOptions } from '../../src/intake/start-data';
import { matchWaiter, openWaiters } from '../../src/db/waiters';
import { endWait, registerWait, waitKey } from '../../src/intake/waits';
import { workflowSinks } from '../../src/temporal/worker';
import { recordCheckoutRefund, recordCheckoutRefundFlow } from '../../workflows';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { workflowBundle } from '../support/stack';
import { timeSkippingEnvironment } from '../support/time-skipping';

/**
 * A wait's timeout (docs/flows.md#wait-for-another-event), on the time-skipping test server with the
 * wait's own activities on PostgreSQL: no refund in 30 days ends `not-refunded` and stops the waiter,
 * so a refund after that matches nothing; a refund matched just before the time was up still counts.
 */
let env: TestWorkflowEnvironment;
let db: TestDatabase;
beforeAll(async () => {
  [env, db] = await Promise.all([timeSkippingEnvironment(), openTestDatabase()]);
});
afterAll(async () => {
  await env?.teardown();
  await db?.drop();
});

const DAY = 24 * 60 * 60 * 1000;

/** A checkout as the intake starts `recordCheckoutRefund` for it. */
function checkoutEvent(id: string, paymentIntent: string): WebhookEvent {
  const at = '2026-12-01T10:00:00.000Z';
  const payload = {
    id,
    type: 'checkout.session.completed',
    data: { object: { id: `cs_${id}`, payment_intent: paymentIntent, metadata: { order_id: `ord_${id}` } } },
  };
  const { options } = startOptions(
    { source: 'shop', provider: ProviderKind.STRIPE, id, type: 'checkout.session.completed', occurredAt: at, receivedAt: at, payload },
    { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE, { 'checkout.session.completed': recordCheckoutRefundFlow.name }) },
    'delivery',
    'unused',
  );
  return options.args[0];
}

it('a checkout with no refund in 30 days (skipped) ends not-refunded, and its waiter matches nothing after', async () => {
  const completed: string[] = [];
  const activities: Partial<Activities> = {
    ...createWaitActivities({ db }),
    claimEvent: async () => 'claimed',
    completeEvent: async ({ status, outcome }) => void completed.push(`${status} ${JSON.stringify(outcome)}`),
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'wait-timeouts',
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
  });
  const event = checkoutEvent('evt_no_refund', 'pi_never_refunded');
  await worker.runUntil(async () => {
    const startedAt = await env.currentTimeMs();
    const handle = await env.client.workflow.start(recordCheckoutRefund, { workflowId: event.id, taskQueue: 'wait-timeouts', args: [event] });
    expect(await handle.result()).toMatchObject({ outcome: 'not-refunded' });
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(30 * DAY);
  });
  expect(completed).toEqual(['completed {"orderId":"ord_evt_no_refund"}']);
  const { rows } = await db.query<{ status: string }>('SELECT status FROM waiters WHERE workflow_id = $1', [event.id]);
  expect(rows).toEqual([{ status: 'timed_out' }]);
  // What the intake looks up for a refund of that PaymentIntent arriving now: no waiter.
  expect(await openWaiters(db, 'shop', 'charge.refunded', [waitKey('/data/object/payment_intent', 'pi_never_refunded')])).toEqual([]);
});

it('a wait whose time is up after an event matched it gets that event, not the timeout', async () => {
  const wait = recordCheckoutRefundFlow.wait('refund');
  const registration = { workflowId: 'evt_raced', source: 'shop', wait, waiting: { paymentIntent: 'pi_raced' } };
  const first = await registerWait(db, registration);
  expect(first).toMatchObject({ waiting: true, remainingMs: expect.any(Number) });
  expect(first.remainingMs).toBeGreaterThan(29 * DAY);
  const matched = {
    eventId: 'evt_refund_raced',
    type: 'charge.refunded',
    receivedAt: new Date().toISOString(),
    fields: { chargeId: 'ch_1', amountRefunded: 100, currency: 'eur' },
  };
  // An arriving refund takes the wait as its timer fires.
  expect(await matchWaiter(db, { workflowId: 'evt_raced', wait: wait.name }, matched, { signalled: false })).toBe(true);
  expect(await endWait(db, 'evt_raced', wait.name)).toEqual({ matched });
  // Registered again (a reset of the run), it answers the same event, and the first registration's deadline.
  expect(await registerWait(db, registration)).toMatchObject({ matched, until: first.until });
  expect(await endWait(db, 'evt_never_registered', wait.name)).toEqual({ timedOut: true });
});
