import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { promoteBuild } from '../../src/temporal/deployments';

/**
 * `workers promote` waits until the build's workers poll the task queue for workflow tasks: Temporal
 * knows a version as soon as any of its pollers reached it (an activity poller, another task queue),
 * and refuses a start pinned to it on a task queue it is not yet present in. The calls are counted
 * on a client that answers as the server does while the workers come up.
 */
const { TASK_QUEUE_TYPE_ACTIVITY, TASK_QUEUE_TYPE_WORKFLOW } = temporal.api.enums.v1.TaskQueueType;

function serverComingUp(answers: Array<temporal.api.workflowservice.v1.IDescribeWorkerDeploymentVersionResponse>, current: string | null = null) {
  const calls: string[] = [];
  let describes = 0;
  const client = {
    options: { namespace: 'default', identity: 'test' },
    workflowService: {
      describeWorkerDeploymentVersion: async () => {
        calls.push('describe');
        return answers[Math.min(describes++, answers.length - 1)];
      },
      describeWorkerDeployment: async () => {
        calls.push('read the current');
        return { workerDeploymentInfo: { routingConfig: { currentDeploymentVersion: current && { deploymentName: 'dw', buildId: current } } } };
      },
      // Answered as a call the server ran twice answers: the build it makes current was current already.
      setWorkerDeploymentCurrentVersion: async (request: { buildId: string }) => {
        calls.push('make current');
        return { previousDeploymentVersion: { deploymentName: 'dw', buildId: request.buildId } };
      },
    },
    workflow: {
      start: async () => {
        calls.push('start the check');
        return { workflowId: 'check', result: async () => undefined };
      },
    },
  };
  return { client: client as unknown as Client, calls };
}

it('starts the pinned check only once the version lists the task queue for workflow tasks', async () => {
  const { client, calls } = serverComingUp([
    { versionTaskQueues: [{ name: 'webhooks', type: TASK_QUEUE_TYPE_ACTIVITY }] },
    {
      versionTaskQueues: [
        { name: 'other', type: TASK_QUEUE_TYPE_WORKFLOW },
        { name: 'webhooks', type: TASK_QUEUE_TYPE_ACTIVITY },
      ],
    },
    {
      versionTaskQueues: [
        { name: 'webhooks', type: TASK_QUEUE_TYPE_ACTIVITY },
        { name: 'webhooks', type: TASK_QUEUE_TYPE_WORKFLOW },
      ],
    },
  ]);
  await expect(promoteBuild(client, { name: 'dw', buildId: 'build-1' }, { waitMs: 10_000, taskQueue: 'webhooks', intervalMs: 1 })).resolves.toEqual({
    deployment: 'dw',
    buildId: 'build-1',
    previous: null,
  });
  expect(calls).toEqual(['describe', 'describe', 'describe', 'start the check', 'read the current', 'make current']);
});

it('names the build that was current before it, read before the change: a retried call answers the build itself (seen in CI as "already current")', async () => {
  const { client } = serverComingUp([{ versionTaskQueues: [{ name: 'webhooks', type: TASK_QUEUE_TYPE_WORKFLOW }] }], 'v1');
  await expect(promoteBuild(client, { name: 'dw', buildId: 'v2' }, { waitMs: 10_000, taskQueue: 'webhooks', intervalMs: 1 })).resolves.toEqual({
    deployment: 'dw',
    buildId: 'v2',
    previous: 'v1',
  });
});

it('gives up naming the task queue when the version never lists it', async () => {
  const { client, calls } = serverComingUp([{ versionTaskQueues: [{ name: 'webhooks', type: TASK_QUEUE_TYPE_ACTIVITY }] }]);
  await expect(promoteBuild(client, { name: 'dw', buildId: 'build-2' }, { waitMs: 50, taskQueue: 'webhooks', intervalMs: 5 })).rejects.toThrow(
    'build build-2 of the worker deployment dw has no worker polling the task queue webhooks after 0 s',
  );
  expect(calls).not.toContain('start the check');
});
