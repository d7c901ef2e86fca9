import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { FailureType } from '../../contracts';
import { MISSING_BODY_WAIT_MS, readEventBody } from '../../activities/event-body';
import { loadWorkerConfig } from '../../src/config';
import { temporalSettings } from '../../src/temporal/connection';
import { startWorker } from '../../src/temporal/worker';
import { createWorkerServices } from '../../src/services';
import { eventually } from '../support/eventually';
import { githubHeaders, SECRETS } from '../support/signing';
import { post, startStack, workflowBundle, type WorkerStack } from '../support/stack';

/**
 * A step that finds its event's body missing (a body store that lost it) waits for the provider's
 * redelivery, which stores the body again, instead of failing the event. The receiver and its
 * PostgreSQL are real; the worker starts only once the body is gone.
 */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ worker: 'external' });
});
afterAll(() => stack.close());

const issueDelivery = async (title: string) => {
  const id = randomUUID();
  const body = JSON.stringify({ action: 'opened', issue: { number: 9, title }, repository: { full_name: 'o/r' } });
  return { id, body, headers: await githubHeaders(body, SECRETS.github, { delivery: id, event: 'issues' }) };
};

it('a step whose body is missing waits, and the redelivery stores it again: the event completes with one email', async () => {
  const delivery = await issueDelivery(`Lost body ${randomUUID()}`);
  expect((await post(`${stack.url}/webhooks/github`, delivery.headers, delivery.body)).status).toBe(202);
  await stack.db.query('DELETE FROM event_bodies WHERE event_id = $1', [delivery.id]);

  const services = await createWorkerServices(loadWorkerConfig(stack.workerEnv, { development: true }), { temporal: stack.client });
  const worker = await startWorker({
    settings: temporalSettings(stack.workerEnv, { worker: true }),
    taskQueue: stack.taskQueue,
    activities: services.activities,
    workflows: await workflowBundle(),
  });
  try {
    const handle = stack.client.workflow.getHandle(delivery.id);
    await eventually('the email step waits for the body', async () => {
      const { raw } = await handle.describe();
      return (
        raw.pendingActivities?.some((activity) => activity.lastFailure?.message?.includes('is not stored yet; a redelivery of the event stores it')) ?? false
      );
    });
    expect(stack.resend.emails.filter((email) => email.idempotencyKey === delivery.id)).toEqual([]);

    const redelivery = await post(`${stack.url}/webhooks/github`, delivery.headers, delivery.body);
    expect(redelivery).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: delivery.id } });
    expect(await handle.result()).toMatchObject({ outcome: 'notified' });
    expect(stack.resend.emails.filter((email) => email.idempotencyKey === delivery.id)).toEqual([
      expect.objectContaining({ subject: expect.stringContaining('Lost body') }),
    ]);
  } finally {
    await worker.shutdown();
    await services.close();
  }
});

describe('a step that reads a body the store does not have', () => {
  const step = { source: 'github', eventId: 'evt_never_stored', step: 'email:notification' };
  // The failures are what the tests expect: the environment does not log them.
  const environment = (info: { attempt?: number; scheduledTimestampMs: number }) =>
    new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR', () => undefined) });

  it('is retried sooner at first, then at most every 5 minutes, while the wait lasts', async () => {
    const failureAt = async (attempt: number) => {
      const error = await environment({ attempt, scheduledTimestampMs: Date.now() - 60_000 })
        .run(() => readEventBody(stack.db, step))
        .catch((caught: unknown) => caught);
      return error as ApplicationFailure;
    };
    expect(await failureAt(1)).toMatchObject({ type: FailureType.EVENT_BODY_MISSING, nonRetryable: false, nextRetryDelay: 1000 });
    expect(await failureAt(4)).toMatchObject({ nonRetryable: false, nextRetryDelay: 8000 });
    expect(await failureAt(40)).toMatchObject({ nonRetryable: false, nextRetryDelay: 300_000 });
  });

  it('fails for good once the wait is over, naming the event and what brings its body back', async () => {
    const error = (await environment({ scheduledTimestampMs: Date.now() - MISSING_BODY_WAIT_MS - 1 })
      .run(() => readEventBody(stack.db, step))
      .catch((caught: unknown) => caught)) as ApplicationFailure;
    expect(error).toMatchObject({ type: FailureType.EVENT_BODY_MISSING, nonRetryable: true });
    expect(error.message).toBe(
      'The body of event evt_never_stored (github) is not stored, and no redelivery brought it in 6 hours. ' +
        'Redeliver the event from github\'s dashboard (or `durable-webhooks backfill`), then `durable-webhooks events reset evt_never_stored --to last-failure --reason "body redelivered"`.',
    );
  });
});
