import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { applySignal, WorkflowType, type Activities, type SubscriptionUpdate, type Workflows } from '../../contracts';
import { temporalTestServerPath } from '../../src/tools';
import { eventually } from '../support/eventually';
import { workflowBundle } from '../support/stack';

/**
 * The subscription entity completes after a day with nothing to apply. An update that arrives in
 * the same workflow task as that idle timeout must be applied, not dropped with the run: here the
 * worker is away while the day passes and the update comes in, so both reach it in one activation.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: temporalTestServerPath() } } });
});
afterAll(() => env?.teardown());

const update = (eventId: string, created: number, status: string): SubscriptionUpdate => ({
  eventId,
  created,
  deleted: false,
  subscription: { id: 'sub_idle', object: 'subscription', customer: 'cus_1', status },
});

it('applies an update that arrives with the idle timeout', async () => {
  const stored: string[] = [];
  const activities: Partial<Activities> = { storeSubscription: async ({ eventId }) => Boolean(stored.push(eventId)) };
  // No workflow cache, so no sticky queue: the second worker gets the task the first one left.
  const workerFor = async () =>
    Worker.create({ connection: env.nativeConnection, taskQueue: 'subscription-idle', workflowBundle: await workflowBundle(), activities, maxCachedWorkflows: 0 });

  const handle = await env.client.workflow.signalWithStart<Workflows['subscriptionEntity'], [SubscriptionUpdate]>(WorkflowType.subscriptionEntity, {
    workflowId: 'durable-webhooks:subscription:sub_idle',
    taskQueue: 'subscription-idle',
    args: [{ subscriptionId: 'sub_idle' }],
    signal: applySignal,
    signalArgs: [update('evt_1', 1_764_000_000, 'active')],
  });
  const first = await workerFor();
  await first.runUntil(eventually('the first update is stored', () => stored.length === 1));

  // No worker: the idle day passes (the timer fires, and its workflow task waits), then the next update arrives.
  const dayPassed = env.sleep('25 hours');
  await eventually('the idle timer fires', async () => (await handle.fetchHistory()).events!.some((event) => event.timerFiredEventAttributes));
  await handle.signal(applySignal, update('evt_2', 1_764_000_100, 'past_due'));

  const second = await workerFor();
  const state = await second.runUntil(handle.result());
  await dayPassed;
  expect(stored).toEqual(['evt_1', 'evt_2']);
  expect(state).toMatchObject({ status: 'past_due', updatesSeen: 2, last: { eventId: 'evt_2' } });
});
