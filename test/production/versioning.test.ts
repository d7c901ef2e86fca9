import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { retryPaymentSignal, statusQuery } from '../../contracts';
import { loadWorkerConfig } from '../../src/config';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { buildCheckFlow } from '../../src/flows';
import { createWorkerServices, type WorkerServices } from '../../src/services';
import { temporalSettings } from '../../src/temporal/connection';
import { startWorker, workflowSinks, type RunningWorker } from '../../src/temporal/worker';
import { temporalCliPath } from '../../src/core/tools';
import { bundleWithChange } from '../support/bundles';
import { eventually } from '../support/eventually';
import { orderCreated } from '../support/events';
import { codeBlocks } from '../support/markdown';
import { ROOT, runCli } from '../support/processes';
import { post, workflowBundle } from '../support/stack';
import { startTopology, type Topology } from '../support/topology';

/**
 * A Worker Versioning rollout on the cluster, as docs/deploys.md tells it: the topology's workers
 * are build A of the deployment `durable-webhooks`; an order declined on A waits for
 * `retryPayment`; build B changes the order flow (a thank-you email before the receipt, behind
 * `patched()`); the page's commands ramp B and make it current; A stops. The signal then finishes
 * the order on B, charged once, and new events start on B.
 */
const DEPLOYMENT = 'durable-webhooks';
const page = readFileSync(path.join(ROOT, 'docs', 'deploys.md'), 'utf8');
const rollout = (step: string) => codeBlocks(page).find((block) => block.lang === 'sh' && block.attributes.rollout === step)!.text;

/**
 * The change build B ships, as the page shows it: after the order is saved as paid (the block's first
 * line, as in workflows/charge-order.ts), one more email, which histories recorded before it never had.
 * Unpatched, the same email without `patched()`.
 */
const change = codeBlocks(page)
  .find((block) => block.attributes.change === 'charge-order.ts')!
  .text.trimEnd()
  .split('\n')
  .map((line) => `    ${line}\n`);
const PAID = change[0]!;
const PATCHED_CHANGE = change.join('');
const UNPATCHED_CHANGE = PATCHED_CHANGE.replace("if (patched('thank-you-note')) ", '');

const bundleWith = (change: string) => bundleWithChange('charge-order.ts', PAID, change);

/** The recorded histories (test/production/histories) a bundle fails to replay, with why. */
async function replayFailures(workflowBundle: WorkflowBundle): Promise<string[]> {
  const dir = path.join(__dirname, 'histories');
  const histories = ['chargeOrder-charged.json', 'chargeOrder-retried.json', 'chargeOrder-approved.json'].map((file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
    return { workflowId: history.events![0]!.workflowExecutionStartedEventAttributes!.workflowId!, history };
  });
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle, sinks: workflowSinks() }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.name}`);
  }
  return failures;
}

let topology: Topology;
let buildB: { services: WorkerServices; worker: RunningWorker } | undefined;
beforeAll(async () => {
  topology = await startTopology({ ACKNOWLEDGE: 'temporal', WORKER_BUILD_ID: 'build-a' });
}, 240_000);
afterAll(async () => {
  await buildB?.worker.shutdown();
  await buildB?.services.close();
  await topology?.close();
}, 60_000);

/** Runs one of the page's `sh` blocks with `temporal` on PATH and the topology's connection, as an operator would. */
async function run(step: string, buildId: string): Promise<string> {
  const env = {
    ...process.env,
    PATH: `${path.dirname(temporalCliPath())}:${process.env.PATH}`,
    TEMPORAL_ADDRESS: topology.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    BUILD_ID: buildId,
  };
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', rollout(step)], { env });
  return stdout;
}

/** The build of every workflow task this workflow's history says completed, in order. */
async function taskBuilds(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history
    .events!.filter((event) => event.workflowTaskCompletedEventAttributes)
    .map((event) => event.workflowTaskCompletedEventAttributes!.deploymentVersion?.buildId ?? 'unversioned');
}

async function versioning(client: Client, workflowId: string) {
  const info = (await client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo!.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId, behavior: info?.behavior };
}

const emailsFor = (eventId: string) =>
  topology.resend.emails.filter((email) => email.idempotencyKey?.startsWith(`${eventId}:`)).map((email) => email.idempotencyKey!.slice(eventId.length + 1));
const chargesFor = (eventId: string) => topology.stripe.charges().filter((intent) => intent.metadata.event_id === eventId);

it('guards the change with the replay test: unpatched, it breaks recorded orders; behind patched(), they replay', async () => {
  expect(await replayFailures(await bundleWith(UNPATCHED_CHANGE))).toEqual(
    expect.arrayContaining([expect.stringMatching(/^[\w-]+: DeterminismViolationError$/)]),
  );
  expect(await replayFailures(await bundleWith(PATCHED_CHANGE))).toEqual([]);
}, 120_000);

it('moves an order waiting for retryPayment from build A to build B, which finishes it once; new events start on B', async () => {
  // The first versioned deploy: build A's workers poll, and the page's first command makes A current.
  await eventually(
    'build A is current',
    async () =>
      await run('first', 'build-a').then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000 },
  );
  const order = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
  expect((await post(`${topology.receivers[0]!.url}/webhooks/${order.path}`, order.headers, order.body)).status).toBe(202);
  const handle = topology.client.workflow.getHandle(order.id);
  await eventually('the order waits for retryPayment', async () => (await handle.query(statusQuery)).awaiting !== null, { timeoutMs: 60_000 });
  expect(await versioning(topology.client, order.id)).toEqual({ buildId: 'build-a', behavior: 2 /* AUTO_UPGRADE */ });
  expect(new Set(await taskBuilds(topology.client, order.id))).toEqual(new Set(['build-a']));

  // Build B: the changed flow, a worker of the same deployment and task queue.
  const services = await createWorkerServices(loadWorkerConfig(topology.env), { temporal: topology.client });
  const worker = await startWorker({
    settings: temporalSettings(topology.env, { worker: true }),
    taskQueue: 'webhooks',
    deployment: { name: DEPLOYMENT, buildId: 'build-b' },
    activities: services.activities,
    workflows: await bundleWith(PATCHED_CHANGE),
  });
  buildB = { services, worker };

  // The page's ramp, then B current; then A's workers stop, as a finished rollout drains them.
  await eventually(
    'build B takes a ramp',
    async () =>
      await run('ramp', 'build-b').then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000 },
  );
  const described = await run('status', 'build-b');
  expect(described).toMatch(/Current\s*Version\s*Build\s*ID\s+build-a/i);
  expect(described).toMatch(/Ramping\s*Version\s*Build\s*ID\s+build-b/i);
  await run('promote', 'build-b');
  expect(await run('status', 'build-b')).toMatch(/Current\s*Version\s*Build\s*ID\s+build-b/i);
  await Promise.all(topology.workers.map((_, index) => topology.killWorker(index)));

  await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 });
  expect(await handle.result()).toMatchObject({ outcome: 'charged' });
  const builds = await taskBuilds(topology.client, order.id);
  expect(builds.at(-1)).toBe('build-b');
  expect(builds.slice(0, builds.indexOf('build-b')).every((build) => build === 'build-a')).toBe(true);
  expect(emailsFor(order.id)).toEqual(['email:payment-failed:1', 'email:thank-you', 'email:receipt']);
  expect(chargesFor(order.id).map((intent) => intent.status)).toEqual(['succeeded']);

  const next = orderCreated();
  expect((await post(`${topology.receivers[1]!.url}/webhooks/${next.path}`, next.headers, next.body)).status).toBe(202);
  expect(await topology.client.workflow.getHandle(next.id).result()).toMatchObject({ outcome: 'charged' });
  expect(new Set(await taskBuilds(topology.client, next.id))).toEqual(new Set(['build-b']));
  expect(emailsFor(next.id)).toEqual(['email:thank-you', 'email:receipt']);
}, 300_000);

it("rolls back as the chart's hook does after helm rollback: the previous build is made current again, once it passes its check", async () => {
  const deploymentName = `rollback-${Date.now()}`;
  const taskQueue = `rollback-${Date.now()}`;
  const services = await createWorkerServices(loadWorkerConfig(topology.env), { temporal: topology.client });
  const builds = await Promise.all(
    ['v1', 'v2'].map(async (buildId) =>
      startWorker({
        settings: temporalSettings(topology.env, { worker: true }),
        taskQueue,
        deployment: { name: deploymentName, buildId },
        activities: services.activities,
        workflows: await workflowBundle(),
      }),
    ),
  );
  // The hook's command (templates/promote.yaml), with the build the rendered release's image tag names.
  const hook = (buildId: string) =>
    runCli(['workers', 'promote', '--wait', '60s'], {
      ...topology.env,
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_DEPLOYMENT_NAME: deploymentName,
      WORKER_BUILD_ID: buildId,
    });
  const newEventRunsOn = async () => {
    const handle = await topology.client.workflow.start(buildCheckFlow.workflow, { workflowId: `rollback-probe-${Date.now()}`, taskQueue });
    await handle.result();
    return new Set(await taskBuilds(topology.client, handle.workflowId));
  };
  try {
    expect(await hook('v1')).toMatchObject({
      code: 0,
      output: expect.stringContaining(`Build v1 is now current in the worker deployment ${deploymentName} (before: unversioned workers)`),
    });
    expect(await hook('v2')).toMatchObject({ code: 0, output: expect.stringContaining('(before: v1)') });
    expect(await newEventRunsOn()).toEqual(new Set(['v2']));
    // helm rollback renders the release before it again: its hook promotes v1, whose Deployment Helm kept.
    expect(await hook('v1')).toMatchObject({ code: 0, output: expect.stringContaining('Build v1 is now current') });
    expect(await newEventRunsOn()).toEqual(new Set(['v1']));
  } finally {
    await Promise.all(builds.map((worker) => worker.shutdown()));
    await services.close();
  }
}, 180_000);
