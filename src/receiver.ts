import './core/compile-cache';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { bodyLimits, loadReceiverConfig, type ReceiverConfig } from './config';
import { openDatabase, type Database } from './db/database';
import { migrate } from './db/migrations';
import { ConfigError } from './core/errors';
import { MessageService } from './outbound/messages';
import { createApp, createOperatorApp } from './http/app';
import { createMetrics, serveMetrics } from './http/metrics';
import { createLogger, type Logger } from './core/logger';
import { SourceRegistry } from './providers/registry';
import { lazyClient, temporalSettings } from './temporal/connection';
import { EntityOperations } from './temporal/entities';
import { busiestKeys, parkedCounts } from './db/entities';
import { EventOperations } from './temporal/operations';
import { Backfills } from './backfill/jobs';
import { ProviderKind } from '../contracts';
import { EventIntake } from './intake/starter';
import { StartSweeper } from './intake/sweeper';
import { heldCounts, syncStandingRates } from './db/holds';
import { errorLine } from './core/redact';
import { BulkJobs } from './temporal/bulk-jobs';
import { UNROUTED_WINDOW_MS, unroutedTypes } from './db/event-bodies';
import { DEFAULT_FLOW, describeRoutes } from './flows';
import { startBacklog } from './db/inbox';
import { startTracing } from './core/tracing';
import { DEFAULT_REFUSAL_LIMITS, RefusalLog } from './db/refusals';
import { deleteOrphanSessions } from './db/console-sessions';
import { SecretFileWatcher } from './providers/secret-files';
import { AddressAllowlists } from './http/address-allowlists';
import { sessionTokens } from './http/console/session';
import { AlertChecker } from './outbound/alerts';
import { HoldOperations } from './operator/holds';

export interface RunningReceiver {
  server: Server;
  url: string;
  /** Where `/admin`, `/console`, `/codec` and `/v1` are served: ADMIN_PORT's server, or `url`. */
  adminUrl: string;
  /** Where `/metrics` is served (RECEIVER_METRICS_ADDRESS, or the next free port); undefined when off. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts the receiver on `config.port` (0 picks a free port) with a client that connects on first
 * use. `db` is the body store, and serves `/admin` and `/v1`. `codec`, the encryption codec of
 * PAYLOAD_ENCRYPTION_KEYS, is served at `/codec` when CODEC_TOKEN or an admin token is set.
 */
export async function startReceiver(config: ReceiverConfig, client: Client, logger: Logger, db: Database, codec?: PayloadCodec): Promise<RunningReceiver> {
  const codecTokens = [...(config.codecToken ? [{ name: 'codec', token: config.codecToken }] : []), ...config.adminTokens];
  if (codec && codecTokens.length === 0) logger.warn('the codec endpoint /codec is off: set CODEC_TOKEN to let operators decode payloads in the Temporal UI');
  const sources = new SourceRegistry(config.sources);
  // Secrets from files (a mounted Kubernetes Secret) rotate when their file changes, without a restart.
  const secretFiles = new SecretFileWatcher(sources, config.sources, { graceMs: config.secretRotationGraceMs, logger });
  secretFiles.start();
  // The providers' published address lists, read before the first delivery is answered.
  const allowlists = new AddressAllowlists(config.addressAllowlists, { refreshMs: config.addressAllowlistRefreshMs, logger });
  await allowlists.start();
  const intake = new EventIntake(client, db, { acknowledge: config.acknowledge, taskQueue: config.taskQueue, logger });
  // ACKNOWLEDGE=database: answered at commit, started after; this receiver sweeps what was not started too.
  const sweeper = config.acknowledge === 'database' ? new StartSweeper(db, client, { taskQueue: config.taskQueue, logger }) : undefined;
  await sweeper?.start();
  // The sources' standing rates (WEBHOOKS_CONFIG `rate:`) are budgets every sweeper of the cluster draws from.
  // A receiver starts whether PostgreSQL answers or not (/readyz says which); the next start syncs them.
  await syncStandingRates(db, config.sources).catch((error: unknown) =>
    logger.warn({ error: errorLine(error) }, 'standing rates not synced: the body store did not answer'),
  );
  const metrics = createMetrics({
    backlog: () => startBacklog(db),
    held: () => heldCounts(db),
    unrouted: () => unroutedTypes(db, DEFAULT_FLOW.name, UNROUTED_WINDOW_MS),
    parked: () => parkedCounts(db),
    waiting: () => busiestKeys(db),
  });
  const operations = new EventOperations(client, { uiUrl: config.temporalUiUrl, db, sources });
  const jobs = new BulkJobs(client, operations, { taskQueue: config.taskQueue });
  const entities = new EntityOperations(client, operations, db);
  const refusals = new RefusalLog(db, logger);
  // Sessions of tokens no longer configured (removed, or moved to another role) go at start.
  if (config.console.enabled) {
    await deleteOrphanSessions(db, sessionTokens(config.adminTokens, config.viewerTokens)).then(
      (deleted) => deleted > 0 && logger.info({ deleted }, 'console sessions of tokens no longer configured deleted'),
      (error: unknown) => logger.warn({ error: errorLine(error) }, 'console sessions not checked: the body store did not answer'),
    );
  }
  const operatorDeps = {
    trustProxy: config.trustProxy,
    loopbackHostsOnly: config.loopbackHostsOnly,
    logger,
    console: config.console.enabled
      ? {
          db,
          operations,
          jobs,
          entities,
          sources: config.sources.map((source) => source.name),
          routes: config.sources.flatMap((source) =>
            describeRoutes(source.routes ?? {}).flatMap(({ pattern, flows }) => flows.map((flow) => ({ source: source.name, pattern, ...flow }))),
          ),
          admins: config.adminTokens,
          viewers: config.viewerTokens,
          sessionTtlMs: config.console.sessionTtlMs,
          refusalLimits: DEFAULT_REFUSAL_LIMITS,
          logger,
          secretUse: async () => {
            const bySource = new Map<string, { source: string; current: number; previous: number }>();
            for (const { labels, value } of (await metrics.verifications.get()).values) {
              const source = String(labels.source);
              const use = bySource.get(source) ?? { source, current: 0, previous: 0 };
              use[labels.secret === 'previous' ? 'previous' : 'current'] += value;
              bySource.set(source, use);
            }
            return [...bySource.values()];
          },
        }
      : undefined,
    admin:
      config.adminTokens.length > 0
        ? {
            operations,
            jobs,
            entities,
            tokens: config.adminTokens,
            holds: new HoldOperations(
              db,
              config.sources.map((source) => source.name),
              true,
            ),
            backfills: new Backfills(client, {
              taskQueue: config.taskQueue,
              stripeSources: config.sources.filter((source) => source.kind === ProviderKind.STRIPE && source.name !== 'stripe').map((source) => source.name),
            }),
          }
        : undefined,
    codec:
      codec && codecTokens.length > 0
        ? { codec, namespace: client.options.namespace, tokens: codecTokens, origins: [new URL(config.temporalUiUrl).origin] }
        : undefined,
    api:
      config.apiTokens.length > 0
        ? {
            db,
            messages: new MessageService(client, db, { taskQueue: config.taskQueue, scheduleMs: config.deliveryScheduleMs }),
            tokens: config.apiTokens,
            allowPrivateEndpoints: config.allowPrivateEndpoints,
          }
        : undefined,
  };
  const operatorRoutes = (['admin', 'console', 'codec', 'api'] as const).filter((route) => operatorDeps[route] !== undefined);
  if (config.adminPort === undefined && operatorRoutes.length > 0 && !config.loopbackHostsOnly) {
    logger.warn(
      { port: config.port, routes: operatorRoutes.map((route) => `/${route === 'api' ? 'v1' : route}`) },
      'operator routes share the webhook port: set ADMIN_PORT to serve them on a port of their own that the internet does not reach',
    );
  }
  const app = createApp({
    ...operatorDeps,
    sources,
    starter: intake,
    metrics,
    refusals,
    allowlists,
    ...bodyLimits(config),
    operatorRoutes: config.adminPort === undefined ? 'with-webhooks' : 'apart',
  });
  // Alerts go out as messages of our own delivery, from every receiver; each is claimed once in PostgreSQL.
  const alerts =
    config.alerts &&
    new AlertChecker(db, new MessageService(client, db, { taskQueue: config.taskQueue, scheduleMs: config.deliveryScheduleMs }), config.alerts, logger);
  await alerts?.start();
  const server = await listen(app, config, config.port);
  const adminServer = config.adminPort === undefined ? undefined : await listen(createOperatorApp(operatorDeps), config, config.adminPort);
  const { port } = server.address() as AddressInfo;
  const metricsServer = config.metricsAddress ? await serveMetrics(metrics, config.metricsAddress, logger) : undefined;
  return {
    server,
    url: `http://localhost:${port}`,
    adminUrl: adminServer ? `http://localhost:${(adminServer.address() as AddressInfo).port}` : `http://localhost:${port}`,
    metricsUrl: metricsServer?.address && `http://${metricsServer.address}/metrics`,
    async close() {
      secretFiles.stop();
      allowlists.stop();
      if (metricsServer?.address) await new Promise<void>((resolve) => metricsServer.server.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (adminServer) await new Promise<void>((resolve) => adminServer.close(() => resolve()));
      await intake.drain();
      await sweeper?.stop();
      await refusals.stop();
      await alerts?.stop();
    },
  };
}

/**
 * An HTTP server for `app` on `port`: whole requests within REQUEST_TIMEOUT, headers within a third
 * of it, checked every second, so a client that trickles its headers or body holds a connection no
 * longer than that; at most MAX_CONNECTIONS at once.
 */
async function listen(app: RequestListener, config: ReceiverConfig, port: number): Promise<Server> {
  const server = createServer(
    { requestTimeout: config.requestTimeoutMs, headersTimeout: Math.ceil(config.requestTimeoutMs / 3), connectionsCheckingInterval: 1000 },
    app,
  );
  server.maxConnections = config.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

async function main(): Promise<void> {
  const logger = createLogger('receiver');
  const config = loadReceiverConfig();
  if (config.sources.length === 0) {
    throw new ConfigError(`no source has a signing secret; set ${config.disabledSources.map((source) => source.env).join(', ')} or WEBHOOKS_CONFIG.`);
  }
  for (const source of config.disabledSources) {
    logger.warn({ source: source.name }, `source ${source.name} disabled: ${source.env} is unset`);
  }
  if (!config.databaseUrl) {
    throw new ConfigError(
      'DATABASE_URL is required: every body is stored there before its workflow starts (npm run dev uses an embedded database in its one process).',
    );
  }
  const tracing = startTracing('durable-webhooks-receiver');
  const settings = temporalSettings();
  const client = lazyClient(settings);
  const db = await openDatabase({ url: config.databaseUrl });
  await migrate(db);
  const receiver = await startReceiver(config, client, logger, db, settings.dataConverter?.payloadCodecs?.[0]);
  logger.info(
    {
      url: receiver.url,
      ...(config.adminPort !== undefined && { admin: receiver.adminUrl }),
      metrics: receiver.metricsUrl ?? 'off',
      sources: config.sources.map((source) => source.name),
      disabledSources: config.disabledSources.map((source) => source.name),
      temporal: settings.connectionOptions.address,
      namespace: settings.namespace,
      taskQueue: config.taskQueue,
      acknowledge: config.acknowledge,
    },
    'receiver listening',
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await receiver.close();
      await client.connection.close();
      await db.close();
      await tracing?.shutdown();
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
