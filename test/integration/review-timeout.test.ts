import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { WorkflowType, type Activities, type Order, type Workflows } from '../../contracts';
import { temporalTestServerPath } from '../../src/tools';
import { workflowSinks } from '../../src/temporal/worker';
import { orderCreatedEvent } from '../support/events';
import { workflowBundle } from '../support/stack';

/**
 * The days-long path of a held order, on the time-skipping test server (the pinned binary from
 * .tools/bin): with no `approve` or `reject` within REVIEW_TIMEOUT, the order is cancelled and the
 * customer told, and nothing is charged. Activities are stand-ins that record their calls.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: temporalTestServerPath() } } });
});
afterAll(() => env?.teardown());

const event = orderCreatedEvent('msg_timeout_1', { orderId: 'ord_big', amount: 500000 });

it('cancels a held order when no decision comes within REVIEW_TIMEOUT (24 h, skipped), charging nothing', async () => {
  const calls: string[] = [];
  const activities: Partial<Activities> = {
    claimEvent: async () => 'claimed',
    flowSettings: async () => ({ reviewThreshold: 100000, reviewTimeout: '24h', notifyEmail: null }),
    saveOrder: async ({ step, order }) => {
      calls.push(step);
      return order as Order;
    },
    sendEmail: async ({ step, text }) => {
      calls.push(`${step}: ${text}`);
      return { messageId: 'm-1' };
    },
    chargeOrder: async () => {
      calls.push('charge');
      return { paymentIntentId: 'pi_never', status: 'succeeded' };
    },
    completeEvent: async ({ status }) => void calls.push(`complete:${status}`),
  };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'review-timeout', workflowBundle: await workflowBundle(), sinks: workflowSinks(), activities });

  await worker.runUntil(async () => {
    const startedAt = await env.currentTimeMs();
    const handle = await env.client.workflow.start<Workflows['chargeOrder']>(WorkflowType.chargeOrder, { workflowId: event.id, taskQueue: 'review-timeout', args: [event] });
    expect(await handle.result()).toMatchObject({ outcome: 'cancelled' });
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(24 * 60 * 60 * 1000);
  });

  expect(calls).toEqual([
    'order:awaiting-review',
    'order:cancelled',
    'email:cancelled: Your order ord_big was cancelled (not reviewed within 24h). You have not been charged.',
    'complete:completed',
  ]);
});
