import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { retryPaymentSignal, statusQuery } from '../../contracts';
import { loadWorkerConfig } from '../../src/config';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { createWorkerServices } from '../../src/services';
import { temporalSettings } from '../../src/temporal/connection';
import { promoteBuild } from '../../src/temporal/deployments';
import { startWorker, type RunningWorker } from '../../src/temporal/worker';
import { bundleWithChange } from '../support/bundles';
import { eventually } from '../support/eventually';
import { orderCreated } from '../support/events';
import { runCli, spawnTs, type Spawned } from '../support/processes';
import { SECRETS, stripeEvent, stripeHeaders } from '../support/signing';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';

/**
 * `durable-webhooks workers promote`, what the Helm chart's post-upgrade hook runs, on the real dev
 * server and worker processes: switching a running stack from unversioned workers to a versioned
 * build, an order that waited on an unversioned worker finishes on the build once it is current.
 * And a flow that declares PINNED: reported by a versioned worker, never by an unversioned one.
 */
const deployment = `dw-test-${randomUUID().slice(0, 8)}`;
let stack: WorkerStack;
const workers: Spawned[] = [];
beforeAll(async () => {
  stack = await startStack({ worker: 'external' });
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await stack.close();
});

async function startWorkerProcess(env: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  const worker = spawnTs('src/worker.ts', [], { ...stack.workerEnv, ...env });
  workers.push(worker);
  await worker.waitFor('worker polling');
  return worker;
}
const promote = (...args: string[]) =>
  runCli(['workers', 'promote', '--deployment', deployment, ...args], {
    TEMPORAL_ADDRESS: stack.workerEnv.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  });

it('makes a build current once its workers poll; an order that waited on unversioned workers finishes on it', async () => {
  const unversioned = await startWorkerProcess();
  const order = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
  expect((await post(`${stack.url}/webhooks/${order.path}`, order.headers, order.body)).status).toBe(202);
  const handle = stack.client.workflow.getHandle(order.id);
  await eventually('the order waits for retryPayment', async () => (await handle.query(statusQuery)).awaiting !== null);

  // The hook starts with the upgrade, before the build's workers poll, and waits for them.
  const promoting = promote('--build-id', 'build-1', '--wait', '60s');
  await startWorkerProcess({ WORKER_BUILD_ID: 'build-1', WORKER_DEPLOYMENT_NAME: deployment });
  expect(await promoting).toMatchObject({
    code: 0,
    output: `Build build-1 is now current in the worker deployment ${deployment} (before: unversioned workers).\n`,
  });
  unversioned.child.kill('SIGTERM');
  await unversioned.exited;

  await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 });
  expect(await handle.result()).toMatchObject({ outcome: 'charged' });
  const described = await handle.describe();
  expect(described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion).toMatchObject({ deploymentName: deployment, buildId: 'build-1' });
  expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === order.id)).toHaveLength(1);

  expect(await promote('--build-id', 'build-1', '--json')).toMatchObject({
    code: 0,
    output: `${JSON.stringify({ deployment, buildId: 'build-1', previous: 'build-1' }, null, 2)}\n`,
  });
}, 90_000);

it('gives up in one line when no worker of the build polls, and asks for a build without one', async () => {
  const nobody = await promote('--build-id', 'build-9', '--wait', '2s');
  expect(nobody.code).toBe(1);
  expect(nobody.error).toMatch(
    new RegExp(
      `^build build-9 of the worker deployment ${deployment} has no worker polling the task queue ${stack.taskQueue} after 2 s \\(are its workers running, with WORKER_BUILD_ID=build-9\\?\\): `,
    ),
  );
  expect(await promote()).toMatchObject({ code: 1, error: 'Which build? Give --build-id, or set WORKER_BUILD_ID as the workers have it.' });
});

it('never makes current a build whose workers poll but fail their workflow tasks, and says why', async () => {
  const broken = await bundleWithChange('build-check.ts', 'await dbActivity.flowSettings();', "throw new Error('this build cannot load its flows');");
  const other = await startStack({ worker: 'external' });
  const services = await createWorkerServices(loadWorkerConfig(other.workerEnv, { development: true }), { temporal: other.client });
  const build = { name: `${deployment}-broken`, buildId: 'broken-1' };
  const worker = await startWorker({
    settings: temporalSettings(other.workerEnv, { worker: true }),
    taskQueue: other.taskQueue,
    deployment: build,
    activities: services.activities,
    workflows: broken,
  });
  try {
    const refused = await promoteBuild(other.client, build, { waitMs: 8_000, taskQueue: other.taskQueue }).catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toBe(
      `build broken-1 of the worker deployment ${build.name} polls but did not complete the check workflow durable-webhooks:build-check:${build.name}.broken-1 within 8 s: its workflow task failed: this build cannot load its flows. It is not made current.`,
    );
    const described = await other.client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: build.name });
    expect(described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? null).toBeNull();
    const check = await other.client.workflow.getHandle(`durable-webhooks:build-check:${build.name}.broken-1`).describe();
    expect(check.status.name).toBe('TERMINATED');
  } finally {
    await worker.shutdown();
    await services.close();
    await other.close();
  }
}, 60_000);

/** An event of a type no flow handles: recordEvent runs it. */
async function unroutedEvent(stack: WorkerStack, client: Client) {
  const event = stripeEvent({ type: 'invoice.paid' });
  const body = JSON.stringify(event);
  expect((await post(`${stack.url}/webhooks/stripe`, stripeHeaders(body, SECRETS.stripe), body)).status).toBe(202);
  expect(await resultOnceStarted(client, event.id as string)).toMatchObject({ outcome: 'ignored' });
  return (await client.workflow.getHandle(event.id as string).describe()).raw.workflowExecutionInfo?.versioningInfo;
}

it('runs a flow declared PINNED on unversioned workers (no behaviour reported), and pins it to a versioned build', async () => {
  const pinned = await bundleWithChange('record-event.ts', "behavior: 'AUTO_UPGRADE'", "behavior: 'PINNED'");
  const other = await startStack({ worker: 'external' });
  const services = await createWorkerServices(loadWorkerConfig(other.workerEnv, { development: true }), { temporal: other.client });
  const start = (versioned?: { name: string; buildId: string }) =>
    startWorker({
      settings: temporalSettings(other.workerEnv, { worker: true }),
      taskQueue: other.taskQueue,
      deployment: versioned,
      activities: services.activities,
      workflows: pinned,
    });
  let worker: RunningWorker | undefined;
  try {
    worker = await start();
    expect(await unroutedEvent(other, other.client)).toBeFalsy();
    await worker.shutdown();

    const build = { name: `${deployment}-pinned`, buildId: 'pinned-1' };
    worker = await start(build);
    await promoteBuild(other.client, build, { waitMs: 30_000, taskQueue: other.taskQueue });
    expect(await unroutedEvent(other, other.client)).toMatchObject({
      behavior: 1 /* PINNED */,
      deploymentVersion: { deploymentName: build.name, buildId: 'pinned-1' },
    });
  } finally {
    await worker?.shutdown();
    await services.close();
    await other.close();
  }
}, 90_000);
