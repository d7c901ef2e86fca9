import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { applySignal, type Activities, type SubscriptionUpdate } from '../../contracts';
import { subscriptionEntity } from '../../workflows';
import { timeSkippingEnvironment } from '../support/time-skipping';
import { eventually } from '../support/eventually';
import { workflowSinks } from '../../src/temporal/worker';
import { workflowBundle } from '../support/stack';

/**
 * The subscription entity completes after a day with nothing to apply. An update that arrives in
 * the same workflow task as that idle timeout must be applied, not dropped with the run: here the
 * worker is away while the day passes and the update comes in, so both reach it in one activation.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
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
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'subscription-idle',
      workflowBundle: await workflowBundle(),
      sinks: workflowSinks(),
      activities,
      maxCachedWorkflows: 0,
    });

  const handle = await env.client.workflow.signalWithStart(subscriptionEntity, {
    workflowId: 'durable-webhooks:subscription:sub_idle',
    taskQueue: 'subscription-idle',
    args: [{ subscriptionId: 'sub_idle' }],
    signal: applySignal,
    signalArgs: [update('evt_1', 1_764_000_000, 'active')],
  });
  const first = await workerFor();
  // The first update applied (its local activity recorded), and the entity back to waiting on a new idle
  // timer, before the worker goes: otherwise that workflow task waits for a worker and time stands still.
  const events = async () => (await handle.fetchHistory()).events!;
  const waitingAfterFirstUpdate = async () => {
    const history = await events();
    // storeSubscription is a local activity: its result is a marker in the history.
    const applied = history.findIndex((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    return applied !== -1 && history.slice(applied).some((event) => event.timerStartedEventAttributes);
  };
  await first.runUntil(eventually('the entity waits on its idle timer after the first update', waitingAfterFirstUpdate));

  // No worker: the idle day passes (the timer fires, and its workflow task waits), then the next update arrives.
  const dayPassed = env.sleep('25 hours');
  await eventually('the idle timer fires', async () => (await events()).some((event) => event.timerFiredEventAttributes));
  await handle.signal(applySignal, update('evt_2', 1_764_000_100, 'past_due'));

  const second = await workerFor();
  const state = await second.runUntil(handle.result());
  await dayPassed;
  // storeSubscription is idempotent (the database applies only a newer update), and as a local
  // activity it may run again when its workflow task is retried (no cache here): each update reached it.
  expect([...new Set(stored)]).toEqual(['evt_1', 'evt_2']);
  expect(state).toMatchObject({ status: 'past_due', updatesSeen: 2, last: { eventId: 'evt_2' } });
});
