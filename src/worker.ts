import './core/compile-cache';
import { loadWorkerConfig } from './config';
import { messageWithCauses } from './core/errors';
import { createLogger } from './core/logger';
import { RetentionPurger } from './intake/retention';
import { StartSweeper } from './intake/sweeper';
import { createWorkerServices } from './services';
import { lazyClient, temporalSettings } from './temporal/connection';
import { installRuntimeServingMetrics } from './temporal/runtime';
import { prebuiltBundlePath, prebuiltWorkflowBundle, startWorker } from './temporal/worker';
import { startTracing } from './core/tracing';

/** `npm run worker`: polls the task queue until SIGINT/SIGTERM, then finishes running tasks and exits. */
async function main(): Promise<void> {
  const logger = createLogger('worker');
  const config = loadWorkerConfig();
  // A port another worker on this host holds is no reason to stop: the next free one, or none.
  const metricsAddress = await installRuntimeServingMetrics(logger, config.metricsAddress);
  const tracing = startTracing('durable-webhooks-worker');
  const workflows = prebuiltWorkflowBundle(prebuiltBundlePath(tracing !== undefined));
  const settings = temporalSettings(process.env, { worker: true });
  const client = lazyClient(settings);
  const services = await createWorkerServices(config, { temporal: client });
  const worker = await startWorker({
    settings,
    taskQueue: config.taskQueue,
    deployment: config.deployment,
    activities: services.activities,
    workflows,
    tracing,
    bodyStore: services.db,
  });
  // Every worker starts what receivers committed and did not start (src/intake/).
  const sweeper = new StartSweeper(services.db, client, { taskQueue: config.taskQueue, logger });
  await sweeper.start();
  const purger = new RetentionPurger(services.db, config.retention, logger);
  purger.start();
  logger.info(
    {
      temporal: settings.connectionOptions.address,
      namespace: settings.namespace,
      taskQueue: config.taskQueue,
      build: config.deployment ? `${config.deployment.name}.${config.deployment.buildId}` : 'unversioned',
      metrics: metricsAddress ? `http://${metricsAddress}/metrics` : 'off',
      downstream: services.describe(),
    },
    'worker polling',
  );
  try {
    await worker.stopped;
  } finally {
    await sweeper.stop();
    await purger.stop();
    await client.connection.close();
    await services.close();
    await tracing?.shutdown();
  }
}

main().catch((error: Error) => {
  createLogger('worker').error(`stopped: ${messageWithCauses(error)}`);
  process.exit(1);
});
