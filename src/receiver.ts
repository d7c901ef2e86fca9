import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from './config';
import { createApp } from './http/app';
import { createLogger, type Logger } from './logger';
import { SourceRegistry } from './providers/registry';
import { lazyClient, temporalSettings } from './temporal/connection';
import { EventOperations } from './temporal/operations';
import { TemporalEventStarter } from './temporal/start-event';

export interface RunningReceiver {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Starts the receiver on `config.port` (0 picks a free port) with a client that connects on first use. */
export async function startReceiver(config: Config, client: Client, logger: Logger = createLogger('receiver')): Promise<RunningReceiver> {
  const app = createApp({
    sources: new SourceRegistry(config.sources),
    starter: new TemporalEventStarter(client, { taskQueue: config.taskQueue }),
    maxBodyBytes: config.maxBodyBytes,
    logger,
    admin: config.adminToken ? { operations: new EventOperations(client, { uiUrl: config.temporalUiUrl }), token: config.adminToken } : undefined,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(config.port, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://localhost:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function main(): Promise<void> {
  const logger = createLogger('receiver');
  const config = loadConfig();
  if (config.sources.length === 0) {
    throw new Error(`no source has a signing secret (${config.disabledSources.join(', ')} are off); set STRIPE_WEBHOOK_SECRET, GITHUB_WEBHOOK_SECRET, STANDARD_WEBHOOK_SECRET or WEBHOOKS_CONFIG.`);
  }
  const settings = temporalSettings();
  const client = lazyClient(settings);
  const receiver = await startReceiver(config, client, logger);
  logger.info('receiver listening', {
    url: receiver.url,
    sources: config.sources.map((source) => source.name),
    disabledSources: config.disabledSources,
    temporal: settings.connectionOptions.address,
    namespace: settings.namespace,
    taskQueue: config.taskQueue,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await receiver.close();
      await client.connection.close();
      process.exit(0);
    });
  }
}

if (require.main === module) {
  main().catch((error: Error) => {
    createLogger('receiver').error(`cannot start: ${error.message}`);
    process.exit(1);
  });
}
