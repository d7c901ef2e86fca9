import { Connection } from '@temporalio/client';
import { loadCommonConfig } from './config';
import { startDevServer } from './dev/dev-server';
import { createLogger } from './core/logger';
import { temporalSettings } from './temporal/connection';
import { prepareNamespace } from './temporal/namespace';

/** `npm run temporal`: only the dev server, prepared (search attributes, retention), until Ctrl-C. */
async function main(): Promise<void> {
  const logger = createLogger('temporal');
  const settings = temporalSettings();
  const address = settings.connectionOptions.address!;
  const server = await startDevServer({ address, dataDir: loadCommonConfig().dataDir });
  const connection = await Connection.connect(settings.connectionOptions);
  await prepareNamespace(connection, settings.namespace);
  await connection.close();
  logger.info({ address, ui: server.uiUrl, db: server.dbFile }, 'Temporal dev server ready');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await server.stop();
      process.exit(0);
    });
  }
}

main().catch((error: Error) => {
  createLogger('temporal').error(`cannot start: ${error.message}`);
  process.exit(1);
});
