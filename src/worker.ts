import { loadWorkerConfig } from './config';
import { createLogger } from './logger';
import { createWorkerServices } from './services';
import { lazyClient, temporalSettings } from './temporal/connection';
import { prebuiltWorkflowBundle, startWorker } from './temporal/worker';

/** `npm run worker`: polls the task queue until SIGINT/SIGTERM, then finishes running tasks and exits. */
async function main(): Promise<void> {
  const logger = createLogger('worker');
  const workflows = prebuiltWorkflowBundle();
  const config = loadWorkerConfig();
  const settings = temporalSettings();
  const client = lazyClient(settings);
  const services = await createWorkerServices(config, { temporal: client });
  const worker = await startWorker({ settings, taskQueue: config.taskQueue, activities: services.activities, workflows });
  logger.info('worker polling', {
    temporal: settings.connectionOptions.address,
    namespace: settings.namespace,
    taskQueue: config.taskQueue,
    downstream: services.describe(),
  });
  try {
    await worker.stopped;
  } finally {
    await client.connection.close();
    await services.close();
  }
}

main().catch((error: Error) => {
  createLogger('worker').error(`stopped: ${error.message}`);
  process.exit(1);
});
