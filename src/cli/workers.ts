import { Command } from 'commander';
import { loadCommonConfig, workerDeploymentOf } from '../config';
import { OperationRejectedError } from '../core/errors';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { promoteBuild } from '../temporal/deployments';
import { durationMs } from './options';
import { jsonOption, print } from './output';
import { millisecondsOf } from '../core/duration';

/** `durable-webhooks workers …`: the Worker Deployment that versioned workers (WORKER_BUILD_ID) belong to. */
export function workersCommand(): Command {
  const workers = new Command('workers').description('Versioned workers (WORKER_BUILD_ID): make a build current in its Worker Deployment.');
  workers
    .command('promote')
    .description(
      'Make a build the current one of its Worker Deployment once its workers poll and complete a check workflow pinned to it: new events and every auto-upgrade execution run on it from their next task (docs/deploys.md).',
    )
    .option('--build-id <id>', 'the build to make current (default: WORKER_BUILD_ID)')
    .option('--deployment <name>', 'the Worker Deployment (default: WORKER_DEPLOYMENT_NAME, or durable-webhooks)')
    .option('--wait <duration>', "how long to wait for the build's workers to poll and pass the check", durationMs('--wait'), millisecondsOf('10m'))
    .option('--task-queue <name>', 'the task queue its workers poll (default: TEMPORAL_TASK_QUEUE, or webhooks)')
    .addOption(jsonOption('print the result as JSON'))
    .action(async (options: { buildId?: string; deployment?: string; wait: number; taskQueue?: string; json?: boolean }) => {
      const buildId = options.buildId ?? process.env.WORKER_BUILD_ID;
      if (!buildId) throw new OperationRejectedError('Which build? Give --build-id, or set WORKER_BUILD_ID as the workers have it.');
      const target = workerDeploymentOf({ WORKER_BUILD_ID: buildId, WORKER_DEPLOYMENT_NAME: options.deployment ?? process.env.WORKER_DEPLOYMENT_NAME })!;
      const client = lazyClient(temporalSettings());
      try {
        const taskQueue = options.taskQueue ?? loadCommonConfig().taskQueue;
        const promotion = await promoteBuild(client, target, { waitMs: options.wait, taskQueue });
        print(options.json, promotion, () =>
          promotion.previous === promotion.buildId
            ? `Build ${promotion.buildId} was already current in the worker deployment ${promotion.deployment}.`
            : `Build ${promotion.buildId} is now current in the worker deployment ${promotion.deployment} (before: ${promotion.previous ?? 'unversioned workers'}).`,
        );
      } finally {
        await client.connection.close();
      }
    });
  return workers;
}
