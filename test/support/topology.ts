import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { startLocalPostgres, type LocalPostgres } from '../../src/cluster/postgres';
import { MAX_MEMBERSHIP_PORT, NODE_PORT_STEP, servicePorts } from '../../src/cluster/server';
import { startStripeStandIn, type StripeStandIn } from '../../src/dev/stripe-stand-in';
import { temporalSettings } from '../../src/temporal/connection';
import { withinTime } from '../../src/core/within-time';
import { freePort, freePortIn } from './ports';
import { ROOT, spawnNpmScript, spawnTs, type Spawned } from './processes';
import { startResendStandIn, type ResendStandIn } from './resend-stand-in';
import { SECRETS_ENV } from './signing';

/**
 * What users deploy, as processes: `npm run cluster` (the pinned Temporal server on PostgreSQL), two
 * `npm run receiver` and two `npm run worker` from the production build, with NODE_ENV unset and
 * real (non-development) secrets. PostgreSQL is a cluster of the run's own, so a test can restart
 * it; our database on it is what the processes get as DATABASE_URL. Stripe and Resend are the
 * local stand-ins, reached through the real SDKs. close() keeps every process's output, and the
 * Temporal nodes' logs, in test-results/production/<test file>/.
 */
export interface Topology {
  client: Client;
  receivers: Array<{ url: string; metricsUrl: string; process: Spawned }>;
  workers: Spawned[];
  stripe: StripeStandIn;
  resend: ResendStandIn;
  /** Our database, for assertions. */
  db: pg.Pool;
  /** The environment every receiver and worker gets. */
  env: NodeJS.ProcessEnv;
  postgres: LocalPostgres;
  temporalAddress: string;
  /** Stops the Temporal server (SIGTERM) and waits for it to exit. */
  stopTemporal(): Promise<void>;
  /** Starts `npm run cluster` again on the same databases. */
  startTemporal(): Promise<void>;
  /** The cluster's nodes as it started them: index, frontend address, process ID. */
  nodes(): Array<{ index: number; frontend: string; pid: number }>;
  /** What `npm run cluster` has written so far. */
  clusterOutput(): string;
  /** SIGKILLs the worker at this index. */
  killWorker(index: number): Promise<void>;
  /** Starts a worker in that slot again. */
  startWorker(index: number): Promise<void>;
  /** Starts one more receiver, with `env` over the topology's; close() stops it with the rest. */
  startReceiver(env?: NodeJS.ProcessEnv): Promise<{ url: string; metricsUrl: string; process: Spawned }>;
  close(): Promise<void>;
}

/** How long a receiver or worker may take to exit on SIGTERM: a worker finishes its running tasks first. */
const SIGTERM_EXIT_MS = 20_000;

export const ADMIN_TOKEN = 'admin-production-test-token-0123456789abcdef0123456789';
export const API_TOKEN = 'tok_production_test_0123456789abcdef0123456789';

/**
 * `extraEnv` goes to every process, the cluster included (Temporal's client TLS variables); `clusterEnv`
 * to `npm run cluster` alone (its frontend's own TLS).
 */
export async function startTopology(
  extraEnv: NodeJS.ProcessEnv = {},
  { clusterEnv: clusterOnly = {}, nodes = 1 }: { clusterEnv?: NodeJS.ProcessEnv; nodes?: number } = {},
): Promise<Topology> {
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-production-'));
  const postgres = startLocalPostgres({ port: await freePort(), user: 'webhooks' });
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query('CREATE DATABASE webhooks');
  await admin.end();
  const databaseUrl = postgres.url.replace(/\/postgres$/, '/webhooks');

  // Below the ephemeral range, where Temporal's membership ports (300 lower) fit its schema.
  const port = await freePortIn(20_000, MAX_MEMBERSHIP_PORT - NODE_PORT_STEP * nodes, ...otherClusterPorts(nodes));
  const temporalAddress = `127.0.0.1:${port}`;
  const clusterEnv = { ...extraEnv, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_DB_URL: postgres.url, DATA_DIR: dir, NODE_ENV: undefined, ...clusterOnly };
  let cluster: Spawned | undefined;
  // Every process that ran, for the logs close() keeps in test-results/production/.
  const ran: Array<{ name: string; process: Spawned }> = [];
  let clusterNodes: Array<{ index: number; frontend: string; pid: number }> = [];
  const startTemporal = async () => {
    cluster = spawnTs('src/temporal-cluster.ts', nodes > 1 ? ['--nodes', String(nodes)] : [], clusterEnv);
    ran.push({ name: 'cluster', process: cluster });
    await cluster.waitFor('cluster ready');
    const ready = cluster
      .output()
      .split('\n')
      .find((line) => line.includes('cluster ready'))!;
    clusterNodes = (JSON.parse(ready) as { nodes: typeof clusterNodes }).nodes;
  };
  const stopTemporal = async () => {
    cluster?.child.kill('SIGTERM');
    await cluster?.exited;
    cluster = undefined;
  };
  await startTemporal();

  const stripe = await startStripeStandIn();
  const resend = await startResendStandIn();
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: undefined,
    ...SECRETS_ENV,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: 'webhooks',
    DATABASE_URL: databaseUrl,
    STRIPE_SECRET_KEY: 'sk_test_production_topology',
    STRIPE_API_URL: stripe.url,
    EMAIL_PROVIDER: 'resend',
    RESEND_API_KEY: 're_test_production_topology',
    RESEND_BASE_URL: resend.url,
    NOTIFY_EMAIL: 'ops@example.com',
    ADMIN_TOKEN,
    API_TOKENS: `production:${API_TOKEN}`,
    ALLOW_PRIVATE_ENDPOINTS: 'true',
    ...extraEnv,
  };

  const workers: Spawned[] = [];
  const startWorker = async (index: number) => {
    // Each worker serves its Prometheus metrics on a port of its own.
    const worker = spawnNpmScript('worker', { ...env, WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}` });
    ran.push({ name: `worker-${index}`, process: worker });
    await worker.waitFor('worker polling');
    workers[index] = worker;
  };
  await Promise.all([startWorker(0), startWorker(1)]);

  // Every receiver started, for close(); `receivers` are the topology's own two.
  const started: Array<{ url: string; metricsUrl: string; process: Spawned }> = [];
  const startReceiver = async (receiverEnv: NodeJS.ProcessEnv = {}) => {
    const receiverPort = await freePort();
    const metricsPort = await freePort();
    const receiver = spawnNpmScript('receiver', { ...env, RECEIVER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`, ...receiverEnv, PORT: String(receiverPort) });
    ran.push({ name: `receiver-${receiverPort}`, process: receiver });
    await receiver.waitFor('receiver listening');
    started.push({ url: `http://127.0.0.1:${receiverPort}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, process: receiver });
    return started.at(-1)!;
  };
  const receivers = await Promise.all([startReceiver(), startReceiver()]);

  // The processes' own connection settings (TLS too, when the test gives it).
  const client = new Client({ connection: Connection.lazy(temporalSettings(env).connectionOptions), namespace: 'default' });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  db.on('error', () => {});

  return {
    client,
    receivers,
    workers,
    stripe,
    resend,
    db,
    env,
    postgres,
    temporalAddress,
    stopTemporal,
    startTemporal,
    nodes: () => clusterNodes,
    clusterOutput: () => cluster?.output() ?? '',
    async killWorker(index) {
      workers[index]!.child.kill('SIGKILL');
      await workers[index]!.exited;
    },
    startWorker,
    startReceiver,
    async close() {
      const stuck: string[] = [];
      try {
        // Each of our processes must exit on SIGTERM, as Kubernetes asks a pod to; one that does not
        // is named, SIGKILLed so the rest can close, and fails the file.
        const processes = ran.filter(({ name, process }) => name !== 'cluster' && process.child.exitCode === null && process.child.signalCode === null);
        const start = Date.now();
        for (const { process } of processes) process.child.kill('SIGTERM');
        await Promise.all(
          processes.map(async ({ name, process }) => {
            if (
              await withinTime(process.exited, SIGTERM_EXIT_MS).then(
                () => true,
                () => false,
              )
            )
              return;
            // Its last lines in the error itself: CI shows a run's output, not its files.
            const last = process.output().trimEnd().split('\n').slice(-15).join('\n');
            stuck.push(`${name}, still running ${((Date.now() - start) / 1000).toFixed(0)} s after SIGTERM; its last lines:\n${last}`);
            process.child.kill('SIGKILL');
            await process.exited;
          }),
        );
        await client.connection.close();
        await db.end();
        await stopTemporal();
        await stripe.close();
        await resend.close();
        postgres.remove();
      } finally {
        // Each test file's logs apart, with the Temporal nodes' own logs beside our processes'.
        const logs = path.join(ROOT, 'test-results', 'production', path.basename(expect.getState().testPath ?? 'topology', '.test.ts'));
        mkdirSync(logs, { recursive: true });
        ran.forEach(({ name, process }, index) => writeFileSync(path.join(logs, `${index}-${name}.log`), process.output()));
        const nodeLogs = path.join(dir, 'cluster', 'temporal');
        for (const file of readdirSync(nodeLogs).filter((name) => name.endsWith('.log'))) copyFileSync(path.join(nodeLogs, file), path.join(logs, file));
        rmSync(dir, { recursive: true, force: true });
      }
      if (stuck.length > 0) throw new Error(`did not exit on SIGTERM (whole logs in test-results/production/):\n${stuck.join('\n\n')}`);
    },
  };
}

/** The offsets from the frontend port of every other port the cluster binds, on each of its nodes. */
export function otherClusterPorts(nodes = 1): number[] {
  const ports = servicePorts(7233);
  const offsets = [...Object.values(ports.grpc), ...Object.values(ports.membership), ports.http].map((port) => port - 7233);
  return Array.from({ length: nodes }, (_, node) => offsets.map((offset) => offset + node * NODE_PORT_STEP))
    .flat()
    .filter((offset) => offset !== 0);
}
