import { loadConfig } from './config';
import { createLogger } from './logger';
import { connectWorkerConnection, temporalSettings } from './temporal/connection';
import { createWorker } from './temporal/worker';

/** `npm run worker`: polls the task queue until SIGINT/SIGTERM, then finishes running tasks and exits. */
async function main(): Promise<void> {
  const logger = createLogger('worker');
  const config = loadConfig();
  const settings = temporalSettings();
  const connection = await connectWorkerConnection(settings);
  const worker = await createWorker({ connection, namespace: settings.namespace, taskQueue: config.taskQueue });
  logger.info('worker polling', { temporal: settings.connectionOptions.address, namespace: settings.namespace, taskQueue: config.taskQueue });
  // The SDK's runtime turns SIGINT/SIGTERM into a graceful shutdown, which ends run().
  await worker.run();
  await connection.close();
}

main().catch((error: Error) => {
  createLogger('worker').error(`stopped: ${error.message}`);
  process.exit(1);
});
