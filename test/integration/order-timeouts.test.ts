import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { FailureType, retryPaymentSignal, statusQuery, type Activities, type ChargeInput, type Order } from '../../contracts';
import { chargeOrder } from '../../workflows';
import { timeSkippingEnvironment } from '../support/time-skipping';
import { workflowSinks } from '../../src/temporal/worker';
import { eventually } from '../support/eventually';
import { orderCreatedEvent } from '../support/events';
import { workflowBundle } from '../support/stack';

/**
 * The days-long paths of an order, on the time-skipping test server (the pinned binary from
 * .tools/bin): a held order with no `approve` or `reject` within REVIEW_TIMEOUT, and a declined one
 * with no `retryPayment` within PAYMENT_RETRY_WINDOW; and, with no worker running while they are
 * sent, two `retryPayment` signals that the workflow takes in one task. Activities are stand-ins that
 * record their calls.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(() => env?.teardown());

const DAY = 24 * 60 * 60 * 1000;

/** Stand-in activities: the charge declines every payment method but pm_card_visa. */
function recordingActivities(settings: Partial<Awaited<ReturnType<Activities['flowSettings']>>>) {
  const calls: string[] = [];
  const activities: Partial<Activities> = {
    claimEvent: async () => 'claimed',
    flowSettings: async () => ({ reviewThreshold: null, reviewTimeout: '24h', notifyEmail: null, ...settings }),
    saveOrder: async ({ step, order }) => {
      calls.push(step);
      return order as Order;
    },
    sendEmail: async ({ step, text }) => {
      calls.push(`${step}: ${text}`);
      return { messageId: 'm-1' };
    },
    chargeOrder: async ({ attempt, paymentMethod, idempotencyKey }: ChargeInput) => {
      calls.push(`charge ${attempt} ${paymentMethod} ${idempotencyKey}`);
      if (paymentMethod !== 'pm_card_visa')
        throw ApplicationFailure.nonRetryable('Your card was declined.', FailureType.CARD_DECLINED, { paymentIntentId: 'pi_1' });
      return { paymentIntentId: 'pi_1', status: 'succeeded' };
    },
    completeEvent: async ({ status }) => void calls.push(`complete:${status}`),
  };
  return { calls, activities };
}

/** Runs a worker for `body`. `cache: false` keeps no workflow in its cache (no sticky queue), so the next worker picks up at once. */
async function run<T>(taskQueue: string, activities: Partial<Activities>, body: () => Promise<T>, { cache = true } = {}): Promise<T> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
    ...(cache ? {} : { maxCachedWorkflows: 0 }),
  });
  return worker.runUntil(body);
}

it('cancels a held order when no decision comes within REVIEW_TIMEOUT (24 h, skipped), charging nothing', async () => {
  const event = orderCreatedEvent('msg_timeout_1', { orderId: 'ord_big', amount: 500000 });
  const { calls, activities } = recordingActivities({ reviewThreshold: 100000 });

  await run('review-timeout', activities, async () => {
    const startedAt = await env.currentTimeMs();
    const handle = await env.client.workflow.start(chargeOrder, { workflowId: event.id, taskQueue: 'review-timeout', args: [event] });
    expect(await handle.result()).toMatchObject({ outcome: 'cancelled' });
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(DAY);
  });

  expect(calls).toEqual([
    'order:awaiting-review',
    'order:cancelled',
    'email:cancelled: Your order ord_big was cancelled (not reviewed within 24h). You have not been charged.',
    'complete:completed',
  ]);
});

it('ends a declined order as declined when no retryPayment comes within PAYMENT_RETRY_WINDOW (7 days from the first decline, skipped), charging nothing', async () => {
  const event = orderCreatedEvent('msg_window_1', { orderId: 'ord_declined', amount: 4200, paymentMethod: 'pm_card_chargeDeclined' });
  const { calls, activities } = recordingActivities({});

  await run('payment-window', activities, async () => {
    const startedAt = await env.currentTimeMs();
    const handle = await env.client.workflow.start(chargeOrder, { workflowId: event.id, taskQueue: 'payment-window', args: [event] });
    expect(await handle.result()).toMatchObject({ outcome: 'declined' });
    const elapsed = (await env.currentTimeMs()) - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(7 * DAY);
    expect(elapsed).toBeLessThan(8 * DAY);
  });

  expect(calls).toEqual([
    'charge 1 pm_card_chargeDeclined msg_window_1:charge:1',
    'order:payment-failed',
    expect.stringMatching(
      /^email:payment-failed:1: We could not charge your card for order ord_declined: Your card was declined\.\n\nPlease update your payment method by \d{4}-\d{2}-\d{2}/,
    ),
    'complete:completed',
  ]);
});

it('counts the window from the first decline: a retry declined on day 3 waits the 4 days left, not 7 more', async () => {
  const event = orderCreatedEvent('msg_window_2', { orderId: 'ord_declined_twice', amount: 4200, paymentMethod: 'pm_card_chargeDeclined' });
  const { calls, activities } = recordingActivities({ paymentRetryWindowMs: 7 * DAY });

  await run('payment-window-2', activities, async () => {
    const startedAt = await env.currentTimeMs();
    const handle = await env.client.workflow.start(chargeOrder, { workflowId: event.id, taskQueue: 'payment-window-2', args: [event] });
    await env.sleep('3 days');
    await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_mastercard', attempt: 2 });
    expect(await handle.result()).toMatchObject({ outcome: 'declined' });
    const elapsed = (await env.currentTimeMs()) - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(7 * DAY);
    expect(elapsed).toBeLessThan(8 * DAY);
  });

  expect(calls.filter((call) => call.startsWith('charge'))).toEqual([
    'charge 1 pm_card_chargeDeclined msg_window_2:charge:1',
    'charge 2 pm_card_mastercard msg_window_2:charge:2',
  ]);
});

it('takes the first of two retryPayment signals that answer one decline, even when both arrive in one workflow task', async () => {
  const event = orderCreatedEvent('msg_two_retries', { orderId: 'ord_two_retries', amount: 4200, paymentMethod: 'pm_card_chargeDeclined' });
  const { calls, activities } = recordingActivities({});
  const handle = await env.client.workflow.start(chargeOrder, { workflowId: event.id, taskQueue: 'two-retries', args: [event] });

  await run(
    'two-retries',
    activities,
    () => eventually('the order waits for retryPayment (attempt 2)', async () => (await handle.query(statusQuery)).awaiting?.signalFields?.attempt === 2),
    { cache: false },
  );
  // No worker runs now: the next workflow task carries both signals, in the order they were sent.
  await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', attempt: 2 });
  await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_mastercard', attempt: 2 });
  await run('two-retries', activities, async () => expect(await handle.result()).toMatchObject({ outcome: 'charged' }));

  expect(calls.filter((call) => call.startsWith('charge'))).toEqual([
    'charge 1 pm_card_chargeDeclined msg_two_retries:charge:1',
    'charge 2 pm_card_visa msg_two_retries:charge:2',
  ]);
});
