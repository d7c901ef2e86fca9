import path from 'node:path';
import { Connection } from '@temporalio/client';
import { hasPostgresBinaries, startLocalPostgres, type LocalPostgres } from './cluster/postgres';
import { DEFAULT_TEMPORAL_DB_URL, HISTORY_SHARDS, PostgresUnreachableError, startCluster, TEMPORAL_SERVER_VERSION, type RunningCluster } from './cluster/server';
import { loadCommonConfig } from './config';
import { createLogger } from './logger';
import { temporalSettings } from './temporal/connection';
import { prepareNamespace } from './temporal/namespace';

/**
 * `npm run cluster`: the pinned Temporal server on PostgreSQL (persistence and SQL visibility, 8
 * history shards) in the foreground, with the namespace prepared as `durable-webhooks setup` does.
 * Without TEMPORAL_DB_URL and with no PostgreSQL answering on 127.0.0.1:5432, it starts one of its
 * own under DATA_DIR/cluster/postgres when the server binaries are installed (Debian's package).
 * Ctrl-C stops all of it.
 */
async function main(): Promise<void> {
  const logger = createLogger('cluster');
  const settings = temporalSettings();
  const address = settings.connectionOptions.address!;
  const dir = path.join(loadCommonConfig().dataDir, 'cluster');
  let dbUrl = process.env.TEMPORAL_DB_URL || DEFAULT_TEMPORAL_DB_URL;

  let postgres: LocalPostgres | undefined;
  let cluster: RunningCluster;
  try {
    cluster = await startCluster({ address, dbUrl, dir: path.join(dir, 'temporal') });
  } catch (error) {
    if (!(error instanceof PostgresUnreachableError) || process.env.TEMPORAL_DB_URL || !hasPostgresBinaries()) throw error;
    const port = Number(new URL(DEFAULT_TEMPORAL_DB_URL).port);
    logger.info({ dir: path.join(dir, 'postgres'), port }, 'no PostgreSQL answers; starting one of our own');
    postgres = startLocalPostgres({ port, user: 'temporal', dir: path.join(dir, 'postgres') });
    dbUrl = postgres.url;
    cluster = await startCluster({ address, dbUrl, dir: path.join(dir, 'temporal') });
  }

  const stop = async () => {
    await cluster.stop();
    postgres?.stop();
  };
  try {
    const connection = await Connection.connect(settings.connectionOptions);
    await prepareNamespace(connection, settings.namespace);
    await connection.close();
  } catch (error) {
    await stop();
    throw error;
  }
  const database = new URL(dbUrl);
  logger.info(
    {
      address,
      namespace: settings.namespace,
      postgres: `${database.hostname}:${database.port || 5432}`,
      historyShards: HISTORY_SHARDS,
      log: cluster.logFile,
    },
    `Temporal ${TEMPORAL_SERVER_VERSION} cluster ready`,
  );

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping = true;
      void stop().then(() => process.exit(0));
    });
  }
  const code = await cluster.exited;
  // Ctrl-C reaches the server too (one process group); the handler above finishes the shutdown.
  if (stopping) return;
  postgres?.stop();
  throw new Error(`the Temporal server exited with code ${code}; see ${cluster.logFile}`);
}

main().catch((error: Error) => {
  createLogger('cluster').error(`cannot run: ${error.message}`);
  process.exit(1);
});
