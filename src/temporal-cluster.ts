import path from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { hasPostgresBinaries, startLocalPostgres, type LocalPostgres } from './cluster/postgres';
import {
  DEFAULT_TEMPORAL_DB_URL,
  HISTORY_SHARDS,
  MIN_NODE_UPTIME_MS,
  startCluster,
  TEMPORAL_SERVER_VERSION,
  type ClusterNode,
  type ClusterTls,
  type RunningCluster,
} from './cluster/server';
import { ConfigError, PostgresUnreachableError } from './core/errors';
import { loadCommonConfig } from './config';
import { createLogger } from './core/logger';
import { temporalSettings } from './temporal/connection';
import { prepareNamespace } from './temporal/namespace';

/**
 * `npm run cluster`: the pinned Temporal server on PostgreSQL (persistence and SQL visibility, 8
 * history shards) in the foreground, with the namespace prepared as `durable-webhooks setup` does.
 * Without TEMPORAL_DB_URL and with no PostgreSQL answering on 127.0.0.1:5432, it starts one of its
 * own under DATA_DIR/cluster/postgres when the server binaries are installed (Debian's package).
 * `npm run cluster -- --nodes 3` runs three server processes on those databases, one ring; clients
 * use node 0's frontend (TEMPORAL_ADDRESS). A node that dies is started again. Ctrl-C stops all of it.
 */
async function main(): Promise<void> {
  const logger = createLogger('cluster');
  const settings = temporalSettings();
  const address = settings.connectionOptions.address!;
  const dir = path.join(loadCommonConfig().dataDir, 'cluster');
  let dbUrl = process.env.TEMPORAL_DB_URL || DEFAULT_TEMPORAL_DB_URL;
  const tls = clusterTls(process.env, settings.connectionOptions.tls);
  const nodes = nodeCount(process.argv.slice(2));
  const onNodeExit = (node: ClusterNode, code: number | null) =>
    logger.warn({ node: node.index, address: node.address, code, log: node.logFile }, `Temporal node ${node.index} exited; starting it again`);
  const clusterOptions = (url: string) => ({ address, dbUrl: url, dir: path.join(dir, 'temporal'), tls, nodes, onNodeExit });

  let postgres: LocalPostgres | undefined;
  let cluster: RunningCluster;
  try {
    cluster = await startCluster(clusterOptions(dbUrl));
  } catch (error) {
    if (!(error instanceof PostgresUnreachableError) || process.env.TEMPORAL_DB_URL || !hasPostgresBinaries()) throw error;
    const port = Number(new URL(DEFAULT_TEMPORAL_DB_URL).port);
    logger.info({ dir: path.join(dir, 'postgres'), port }, 'no PostgreSQL answers; starting one of our own');
    postgres = startLocalPostgres({ port, user: 'temporal', dir: path.join(dir, 'postgres') });
    dbUrl = postgres.url;
    cluster = await startCluster(clusterOptions(dbUrl));
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
      nodes: cluster.nodes.map(({ index, address: frontend, pid }) => ({ index, frontend, pid })),
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
  throw new Error(
    `a Temporal node exited (code ${code}) again within ${MIN_NODE_UPTIME_MS / 1000} s of being restarted; see its log under ${path.dirname(cluster.logFile)}`,
  );
}

/** `--nodes <n>`: server processes on the same databases, one ring (1 to 5). */
function nodeCount(args: string[]): number {
  const at = args.indexOf('--nodes');
  if (at === -1) return 1;
  const count = Number(args[at + 1]);
  if (!Number.isInteger(count) || count < 1 || count > 5)
    throw new ConfigError(`--nodes takes a number of server processes from 1 to 5, not "${args[at + 1] ?? ''}".`);
  return count;
}

/**
 * TEMPORAL_CLUSTER_TLS_CERT_PATH, _KEY_PATH and _CLIENT_CA_PATH turn on mTLS on the frontend: its
 * certificate, and the CA its clients' certificates must come from. The server's own system worker
 * presents this process's client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, … as every process reads them).
 */
function clusterTls(env: NodeJS.ProcessEnv, client: ConnectionOptions['tls']): ClusterTls | undefined {
  const certFile = env.TEMPORAL_CLUSTER_TLS_CERT_PATH;
  if (!certFile) return undefined;
  const keyFile = env.TEMPORAL_CLUSTER_TLS_KEY_PATH;
  const clientCaFile = env.TEMPORAL_CLUSTER_TLS_CLIENT_CA_PATH;
  if (!keyFile || !clientCaFile)
    throw new ConfigError('TEMPORAL_CLUSTER_TLS_CERT_PATH needs TEMPORAL_CLUSTER_TLS_KEY_PATH and TEMPORAL_CLUSTER_TLS_CLIENT_CA_PATH too.');
  const pair = typeof client === 'object' && client ? client : undefined;
  if (!pair?.clientCertPair || !pair.serverRootCACertificate) {
    throw new ConfigError(
      "A frontend with mTLS needs this process's client certificate too, for the server's system worker: set TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH and TEMPORAL_TLS_SERVER_CA_CERT_PATH.",
    );
  }
  return {
    certFile,
    keyFile,
    clientCaFile,
    client: { crt: Buffer.from(pair.clientCertPair.crt), key: Buffer.from(pair.clientCertPair.key), serverCa: Buffer.from(pair.serverRootCACertificate) },
  };
}

main().catch((error: Error) => {
  createLogger('cluster').error(`cannot run: ${error.message}`);
  process.exit(1);
});
