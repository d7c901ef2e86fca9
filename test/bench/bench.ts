/**
 * `npm run bench`: the receiver measured against the engine itself, in ratios, in one run.
 *
 * On one Temporal server (the dev server, or with BENCH_TEMPORAL=cluster the pinned cluster on
 * PostgreSQL that `npm run cluster` runs), in rounds that alternate which side goes first so both
 * share the machine's noise:
 *   G1  receiver (signed HTTP delivery → verify → store the body → durable start) ÷ raw
 *       `client.workflow.start` of the same workflow type, arguments and options, same concurrency
 *   G4  receiver p99 ÷ raw start p99
 *   G5  duplicates ÷ new events, through the receiver
 *   G6  workflows completed ÷ started, over a sustained run with the worker processing
 *   G7  the seed design's handler (Express + one PostgreSQL transaction) ÷ the receiver (reported)
 *   G10 the receiver with ACKNOWLEDGE=database ÷ the seed handler (its p99 against the seed's too)
 *   G11 the inbox's backlog drained by a sweeper, starts/s ÷ raw start (reported)
 *   G15 keyed ÷ unkeyed: Shopify orders, each its key's turn (1,000 keys), completed/s ÷ as many
 *       Stripe checkouts, with the worker processing, same concurrency
 * then one hot key: 50 states a second of one Shopify order for 10 minutes, every one completed
 * (applied or superseded), none of its entity's runs terminated, and its key lag's p50 and p99;
 * and keys at scale: 10,000 states of 1,000 orders, shuffled, a fifth twice, one in twenty a minute
 * late: none lost, none applied out of its order's version order, every order fulfilled once
 * and, from sustained runs in both modes, end-to-end latency (POST → workflow completed) and
 * history events per flow; and first, per provider kind, the cost of refusing its worst
 * unauthenticated delivery beside a valid one's, in ms per MiB (target: at most 50), and /healthz
 * latency while 8 of the costliest are answered; then G14, the console's list and filter pages on a
 * million generated events, slowest p95 ÷ 200 ms. Prints a table, writes bench-results/<timestamp>.json and .svg (latency percentiles of
 * each side), and exits 1 when a target is missed.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import Stripe from 'stripe';
import { request } from 'undici';
import { startLocalPostgres } from '../../src/cluster/postgres';
import { MAX_MEMBERSHIP_PORT } from '../../src/cluster/server';
import { loadReceiverConfig, loadWorkerConfig } from '../../src/config';
import { startStripeStandIn } from '../../src/dev/stripe-stand-in';
import { startDevServer } from '../../src/dev/dev-server';
import { silentLogger } from '../../src/core/logger';
import { Router } from '../../src/flows';
import { createStripeAdapter } from '../../src/providers/stripe';
import type { Database } from '../../src/db/database';
import { startBacklog } from '../../src/db/inbox';
import { createHold, releaseHolds } from '../../src/db/holds';
import { StartSweeper } from '../../src/intake/sweeper';
import { createWorkerServices } from '../../src/services';
import { prepareNamespace } from '../../src/temporal/namespace';
import { startOptions } from '../../src/intake/start-data';
import { startWorker } from '../../src/temporal/worker';
import { temporalSettings } from '../../src/temporal/connection';
import { isUnavailable } from '../../src/temporal/availability';
import { createTestDatabase } from '../support/database';
import { passableTempDir } from '../support/dirs';
import { CONSOLE_P95_TARGET_MS, measureConsole } from './console';
import { freePort, freePortIn } from '../support/ports';
import { spawnNpmScript, spawnTs } from '../support/processes';
import { startResendStandIn } from '../support/resend-stand-in';
import { otherClusterPorts } from '../support/topology';
import { workflowBundle } from '../support/stack';
import { latencyChart } from './chart';
import { shopifyOrderPaid } from '../support/events';
import { entityWorkflowId, type EventOutcome } from '../../contracts';
import { CATALOG_SECRETS } from '../support/signing';
import { measureHostileCosts, measureLargeBodies, REFUSED_MS_PER_MIB_TARGET } from './hostile';
import { startSeedHandler } from './seed-handler';
import { measureRouting, ROUTE_MS_TARGET } from './routing';
import { celLine, measureCelLibraries } from './cel';
import { measureWaits } from './waits';
import { built } from './production-build';
import { benchSize, SHORT } from './settings';

/** Every receiver measured here is the production build's. */
const { startReceiver } = built('./src/receiver.js') as typeof import('../../src/receiver');

const EVENTS = benchSize('EVENTS', 200, 20);
const ROUNDS = benchSize('ROUNDS', 4, 1);
const CONCURRENCY = benchSize('CONCURRENCY', 16, 4);
const SUSTAIN_SECONDS = benchSize('SUSTAIN_SECONDS', 20, 2);
/** The sustained run's offered load, events per second. */
const RATE = benchSize('RATE', 10, 10);
/** Checkouts each worker-capacity run drains (with DATABASE_URL: the workers are processes of their own). */
const CAPACITY_EVENTS = benchSize('CAPACITY_EVENTS', 300, 20);
/** Events (and keys: one event each, every one a turn of its own key's entity) of each side of G15. */
const KEYED_EVENTS = benchSize('KEYED_EVENTS', 1000, 20);
/** Passes of G15, each side first in turn; a short run's one shows the measure works. */
const KEYED_PASSES = SHORT ? 1 : 2;
/** One hot key: states a second of one Shopify order, for this long (10 minutes; 2 s in a short run). */
const HOT_KEY_RATE = benchSize('HOT_KEY_RATE', 50, 50);
const HOT_KEY_SECONDS = benchSize('HOT_KEY_SECONDS', 600, 2);
/** Keys at scale: Shopify orders, and states of each (10,000 events; 100 in a short run), one in twenty held back this long. */
const SCALE_KEYS = benchSize('SCALE_KEYS', 1000, 20);
const SCALE_STATES = benchSize('SCALE_STATES', 10, 5);
const SCALE_LATE_SECONDS = benchSize('SCALE_LATE_SECONDS', 60, 2);
const SERVER = process.env.BENCH_TEMPORAL === 'cluster' ? 'cluster' : 'dev';
const SECRET = 'whsec_bench';
const TARGETS = {
  G1: { atLeast: 0.9 },
  G4: { atMost: 1.3 },
  G5: { atLeast: 1.0 },
  G6: { atLeast: 0.95 },
  G10: { atLeast: 0.5 },
  G12: { atMost: 1.05 },
  G13: { atMost: 0.3 },
  G14: { atMost: 1 },
  G15: { atLeast: 0.8 },
  G16: { atMost: 1 },
  G17: { atMost: 1.5 },
} as const;
/** The rate a hold is released at in the drain measurement (G12, G13), starts per second. */
const RELEASE_RATE = benchSize('RELEASE_RATE', 50, 50);
/** Where the JSON and SVG of a run go (BENCH_RESULTS_DIR). @default bench-results/ */
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR || path.resolve(__dirname, '../../bench-results');

const webhooks = new Stripe('sk_test_bench').webhooks;
const adapter = createStripeAdapter({ source: 'stripe', secrets: [SECRET] });

interface Delivery {
  id: string;
  body: string;
  headers: Record<string, string>;
}

/** A signed `checkout.session.completed`, as Stripe would send it; for a connected `account` (a tenant) when given. */
function delivery(account?: string): Delivery {
  const id = `evt_bench_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({
    id,
    object: 'event',
    ...(account && { account }),
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `cs_${id}`,
        object: 'checkout.session',
        amount_total: 4200,
        currency: 'eur',
        payment_intent: `pi_${id}`,
        customer_details: { email: 'ada@example.com' },
        metadata: { order_id: `ord_${id}` },
      },
    },
  });
  return {
    id,
    body,
    headers: { 'content-type': 'application/json', 'stripe-signature': webhooks.generateTestHeaderString({ payload: body, secret: SECRET }) },
  };
}

/** Runs `work` over `items` with `concurrency` at a time; returns each one's latency (ms) and the wall time (s). */
async function drive<T>(items: T[], work: (item: T) => Promise<void>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const sent = performance.now();
        await work(item);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

/**
 * One POST through undici's keep-alive pool: the load generator shares the machine with what it
 * measures, so it should cost as little as it can (global fetch costs several times more per request).
 */
async function postExpecting(url: string, { headers, body }: Delivery, status: number): Promise<void> {
  const response = await request(url, { method: 'POST', headers, body });
  await response.body.dump();
  if (response.statusCode !== status) throw new Error(`${url}: expected ${status}, got ${response.statusCode}`);
}

/** Throughput and latency of one side over every round. */
class Side {
  private latencies: number[] = [];
  private seconds = 0;
  constructor(readonly name: string) {}
  add(result: { latencies: number[]; seconds: number }): void {
    this.latencies.push(...result.latencies);
    this.seconds += result.seconds;
  }
  get perSecond(): number {
    return this.latencies.length / this.seconds;
  }
  percentile(q: number): number {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  }
  summary() {
    return {
      name: this.name,
      requests: this.latencies.length,
      perSecond: round(this.perSecond),
      p50: round(this.percentile(0.5)),
      p90: round(this.percentile(0.9)),
      p99: round(this.percentile(0.99)),
    };
  }
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

async function startTemporal(): Promise<{ address: string; stop(): Promise<void> }> {
  if (SERVER === 'dev') {
    const server = await startDevServer({
      address: `127.0.0.1:${await freePort(1000)}`,
      dataDir: mkdtempSync(path.join(tmpdir(), 'dw-bench-')),
      stdio: 'ignore',
    });
    return { address: server.address, stop: () => server.stop() };
  }
  execFileSync('bash', ['scripts/install-temporal-server.sh'], { stdio: 'inherit' });
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-bench-cluster-'));
  const postgres = startLocalPostgres({ port: await freePort(), user: 'webhooks' });
  const address = `127.0.0.1:${await freePortIn(20_000, MAX_MEMBERSHIP_PORT, ...otherClusterPorts())}`;
  const cluster = spawnTs('src/temporal-cluster.ts', [], { TEMPORAL_ADDRESS: address, TEMPORAL_DB_URL: postgres.url, DATA_DIR: dir, NODE_ENV: undefined });
  await cluster.waitFor('cluster ready');
  return {
    address,
    async stop() {
      cluster.child.kill('SIGTERM');
      await cluster.exited;
      postgres.remove();
    },
  };
}

async function main(): Promise<void> {
  // The worker's metrics, served where the hot key reads how many of its entity's signals failed.
  const metricsUrl = `http://127.0.0.1:${await freePort()}/metrics`;
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { metrics: { prometheus: { bindAddress: new URL(metricsUrl).host } } } });
  // First, on a quiet machine: what refusing the worst unauthenticated deliveries costs, and the
  // console's pages on a million stored events.
  const hostile = await measureHostileCosts();
  const largeBodies = await measureLargeBodies();
  const routing = measureRouting();
  const celLibraries = measureCelLibraries();
  const waits = await measureWaits();
  const consolePages = await measureConsole();
  const temporal = await startTemporal();
  // Whatever ends the run, its Temporal server ends with it: a failure, or Ctrl-C / SIGTERM.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void temporal.stop().finally(() => process.exit(130)));
  try {
    await measure(hostile, largeBodies, consolePages, routing, celLibraries, waits, temporal, metricsUrl);
  } finally {
    await temporal.stop();
  }
}

/** Everything measured on the Temporal server `temporal`, which the caller stops. */
async function measure(
  hostile: Awaited<ReturnType<typeof measureHostileCosts>>,
  largeBodies: Awaited<ReturnType<typeof measureLargeBodies>>,
  consolePages: Awaited<ReturnType<typeof measureConsole>>,
  routing: ReturnType<typeof measureRouting>,
  celLibraries: ReturnType<typeof measureCelLibraries>,
  waits: Awaited<ReturnType<typeof measureWaits>>,
  temporal: Awaited<ReturnType<typeof startTemporal>>,
  /** Where the in-process worker serves its Prometheus metrics. */
  metricsUrl: string,
): Promise<void> {
  const connection = await Connection.connect({ address: temporal.address });
  await prepareNamespace(connection, 'default');
  const client = new Client({ connection });
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const stripe = await startStripeStandIn();
  const resend = await startResendStandIn();
  const startsQueue = `bench-starts-${randomUUID()}`;
  const workQueue = `bench-work-${randomUUID()}`;
  const workerEnv = {
    DATABASE_URL: database?.url ?? '',
    DATA_DIR: passableTempDir('dw-bench-data-'),
    STRIPE_SECRET_KEY: 'sk_test_bench',
    STRIPE_API_URL: stripe.url,
    EMAIL_PROVIDER: 'resend',
    RESEND_API_KEY: 're_test_bench',
    RESEND_BASE_URL: resend.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: workQueue,
  };
  // One database for both receivers and the worker: PostgreSQL with DATABASE_URL, else the embedded PostgreSQL `npm run dev` runs.
  const services = await createWorkerServices(loadWorkerConfig(workerEnv, { development: true }), { temporal: client, embedded: true });
  const receiverConfig = (taskQueue: string, acknowledge = 'temporal') =>
    loadReceiverConfig({
      PORT: '0',
      STRIPE_WEBHOOK_SECRET: SECRET,
      SHOPIFY_WEBHOOK_SECRET: CATALOG_SECRETS.shopify,
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_ADDRESS: temporal.address,
      ACKNOWLEDGE: acknowledge,
    });
  const starts = await startReceiver(receiverConfig(startsQueue), client, silentLogger, services.db);
  const startsAtCommit = await startReceiver(receiverConfig(startsQueue, 'database'), client, silentLogger, services.db);
  const work = await startReceiver(receiverConfig(workQueue), client, silentLogger, services.db);
  let workAtCommit: Awaited<ReturnType<typeof startReceiver>> | undefined;
  /** Waits until every committed body has its workflow, so no side measures another's leftover starts. */
  const drained = async () => {
    while ((await startBacklog(services.db)).count > 0) await delay(50);
  };
  const seed = database ? await startSeedHandler(database.url, SECRET) : undefined;

  const raw = new Side('raw client.workflow.start');
  const receiver = new Side('receiver, new events');
  const duplicates = new Side('receiver, duplicates');
  const seedSide = new Side('seed handler (Express + PostgreSQL)');
  const atCommit = new Side('receiver, ACKNOWLEDGE=database, new events');
  /** CPU this process spent on the database-mode side: the receiver and the load it is sent. */
  let atCommitCpuSeconds = 0;
  // The raw side starts exactly what the receiver would for the same delivery, prepared before the clock runs.
  const rawStarts = (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const event = delivery();
        const { events } = await adapter.verify({ rawBody: Buffer.from(event.body), headers: event.headers, receivedAt: new Date() });
        return startOptions(
          { source: 'stripe', provider: 'stripe', ...events[0]!, receivedAt: new Date().toISOString() },
          { workflowIdPrefix: '', router: new Router('stripe') },
          'delivery',
          startsQueue,
        );
      }),
    );
  const rawStart = async ({ flow, options }: Awaited<ReturnType<typeof rawStarts>>[number]) => void (await client.workflow.start(flow.workflow, options));

  try {
    // Warm-up: connections, JIT, the server's caches.
    await drive(await rawStarts(50), rawStart);
    await drive(Array.from({ length: 50 }, delivery), (event) => postExpecting(`${starts.url}/webhooks/stripe`, event, 202));

    for (let index = 0; index < ROUNDS; index++) {
      const sides: Array<() => Promise<void>> = [
        async () => {
          const prepared = await rawStarts(EVENTS);
          raw.add(await drive(prepared, rawStart));
        },
        async () => {
          const events = Array.from({ length: EVENTS }, delivery);
          receiver.add(await drive(events, (event) => postExpecting(`${starts.url}/webhooks/stripe`, event, 202)));
          duplicates.add(await drive(events, (event) => postExpecting(`${starts.url}/webhooks/stripe`, event, 200)));
        },
        async () => {
          const cpuBefore = process.cpuUsage();
          atCommit.add(await drive(Array.from({ length: EVENTS }, delivery), (event) => postExpecting(`${startsAtCommit.url}/webhooks/stripe`, event, 202)));
          const used = process.cpuUsage(cpuBefore);
          atCommitCpuSeconds += (used.user + used.system) / 1e6;
          await drained();
        },
        ...(seed
          ? [
              async () =>
                seedSide.add(await drive(Array.from({ length: EVENTS }, delivery), (event) => postExpecting(`${seed.url}/webhooks/stripe`, event, 200))),
            ]
          : []),
      ];
      for (const side of index % 2 === 0 ? sides : [...sides].reverse()) await side();
      process.stderr.write(`round ${index + 1}/${ROUNDS} done\n`);
    }

    // G11: a backlog committed while nobody started it (Temporal "down" for the receiver), drained by
    // one sweeper, with no other (the database-mode receivers run one each) running meanwhile.
    await startsAtCommit.close();
    const drain = await drainBacklog(client, services.db, temporal.address, startsQueue, raw.perSecond);
    const release = await releaseHeld(client, services.db, startsQueue);
    workAtCommit = await startReceiver(receiverConfig(workQueue, 'database'), client, silentLogger, services.db);

    // G6 and end to end: sustained runs with the worker processing every event, in each mode.
    const worker = await startWorker({
      settings: temporalSettings(workerEnv),
      taskQueue: workQueue,
      activities: services.activities,
      workflows: await workflowBundle(),
    });
    const sustained = await sustain(client, `${work.url}/webhooks/stripe`);
    const sustainedAtCommit = await sustain(client, `${workAtCommit.url}/webhooks/stripe`);
    const keyed = await keyedThroughput(client, work.url);
    const hot = await hotKey(client, work.url, metricsUrl);
    const scale = await keysAtScale(client, work.url, resend);
    await worker.shutdown();

    // Worker capacity, with one and then two `npm run worker` processes (PostgreSQL only: they share it).
    const capacity = database
      ? [
          await workerCapacity(client, 1, { ...workerEnv, DATABASE_URL: database.url }, receiverConfig, services.db),
          await workerCapacity(client, 2, { ...workerEnv, DATABASE_URL: database.url }, receiverConfig, services.db),
        ]
      : [];

    const g1 = receiver.perSecond / raw.perSecond;
    const g4 = receiver.percentile(0.99) / raw.percentile(0.99);
    const g5 = duplicates.perSecond / receiver.perSecond;
    const g6 = sustained.completedInWindow / sustained.startedInWindow;
    const g7 = seed ? seedSide.perSecond / receiver.perSecond : undefined;
    const g10 = seed ? atCommit.perSecond / seedSide.perSecond : undefined;
    const ratios = [
      { id: 'G1', what: 'receiver ÷ raw start, events/s', value: g1, target: TARGETS.G1 },
      { id: 'G4', what: 'receiver p99 ÷ raw start p99', value: g4, target: TARGETS.G4 },
      { id: 'G5', what: 'duplicates ÷ new events, events/s', value: g5, target: TARGETS.G5 },
      { id: 'G6', what: 'completed ÷ started, sustained', value: g6, target: TARGETS.G6 },
      { id: 'G7', what: 'seed handler ÷ receiver, events/s', value: g7, target: undefined },
      { id: 'G10', what: 'receiver with ACKNOWLEDGE=database ÷ seed handler, events/s', value: g10, target: TARGETS.G10 },
      {
        id: 'G10 p99',
        what: 'ACKNOWLEDGE=database p99 ÷ seed handler p99',
        value: seed ? atCommit.percentile(0.99) / seedSide.percentile(0.99) : undefined,
        target: undefined,
      },
      { id: 'G11', what: 'backlog drained by a sweeper ÷ raw start, starts/s', value: drain.perSecond / raw.perSecond, target: undefined },
      {
        id: 'G12',
        what: `held events released at ${RELEASE_RATE}/s by two sweepers: measured ÷ configured rate`,
        value: release.perSecond / RELEASE_RATE,
        target: TARGETS.G12,
      },
      {
        id: 'G13',
        what: "fairness: the small tenant's last start ÷ the whole drain's time (taking turns: about 2 × its share)",
        value: release.smallTenantDoneSeconds / release.seconds,
        target: TARGETS.G13,
      },
      { id: 'G15', what: `keyed ÷ unkeyed, completed/s (${keyed.events} keys, one event each)`, value: keyed.ratio, target: TARGETS.G15 },
      {
        id: 'G16',
        what: `routing at ${routing.routes} filtered routes: the intake's added ms per event per matching route ÷ ${ROUTE_MS_TARGET} ms`,
        value: routing.ratio,
        target: TARGETS.G16,
      },
      {
        id: 'G17',
        what: `waits: matching an awaited event, and a new wait's look back, with ${waits.loaded.toLocaleString('en')} open waits and stored events on other keys ÷ with none (the slower)`,
        value: waits.ratio,
        target: TARGETS.G17,
      },
      {
        id: 'G14',
        what: `console on ${consolePages.events.toLocaleString('en')} events: slowest page's p95 ÷ ${CONSOLE_P95_TARGET_MS} ms`,
        value: Math.max(...consolePages.pages.map((page) => page.p95)) / CONSOLE_P95_TARGET_MS,
        target: TARGETS.G14,
      },
    ].map((ratio) => ({
      ...ratio,
      value: ratio.value === undefined ? null : round(ratio.value),
      met:
        ratio.value === undefined || !ratio.target
          ? null
          : 'atLeast' in ratio.target
            ? ratio.value >= ratio.target.atLeast
            : ratio.value <= ratio.target.atMost,
    }));

    const sides = [raw, receiver, duplicates, atCommit, ...(seed ? [seedSide] : [])].map((side) => side.summary());
    const result = {
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version },
      temporal: SERVER,
      database: database ? 'PostgreSQL' : 'embedded PostgreSQL',
      settings: { short: SHORT, events: EVENTS, rounds: ROUNDS, concurrency: CONCURRENCY, sustainSeconds: SUSTAIN_SECONDS, sustainRate: RATE },
      ratios,
      sides,
      endToEnd: { temporal: sustained.endToEnd, database: sustainedAtCommit.endToEnd },
      backlogDrain: drain,
      keyed,
      hotKey: hot,
      keysAtScale: scale,
      release,
      historyEventsPerFlow: sustained.historyEvents,
      receiverPerCpuSecond: round(atCommit.summary().requests / Math.max(atCommitCpuSeconds, 1e-9)),
      workerCapacity: capacity,
      refusedDeliveries: hostile,
      largeBodies,
      routing,
      celLibraries,
      waits,
      console: consolePages,
    };

    const stamp = result.at.replace(/[:.]/g, '-');
    const dir = RESULTS_DIR;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
    const chart = latencyChart(`Latency per side (${SERVER} server, concurrency ${CONCURRENCY})`, [
      ...sides.map((side) => ({ name: side.name, percentiles: { p50: side.p50, p90: side.p90, p99: side.p99 } })),
      { name: 'end to end (POST → completed)', percentiles: sustained.endToEnd },
      { name: 'end to end, ACKNOWLEDGE=database', percentiles: sustainedAtCommit.endToEnd },
    ]);
    writeFileSync(path.join(dir, `${stamp}.svg`), chart);

    console.log(`\nTemporal ${SERVER} server, body store ${result.database}, ${result.machine.cpus} × ${result.machine.cpu}, Node ${process.version}`);
    console.log(`${ROUNDS} rounds × ${EVENTS} events per side, concurrency ${CONCURRENCY}; sustained ${SUSTAIN_SECONDS} s at ${RATE} events/s\n`);
    console.log('| ratio | measured | target | |\n|---|---|---|---|');
    for (const ratio of ratios) {
      const target = !ratio.target ? 'reported' : 'atLeast' in ratio.target ? `≥ ${ratio.target.atLeast}` : `≤ ${ratio.target.atMost}`;
      console.log(
        `| ${ratio.id}: ${ratio.what} | ${ratio.value ?? 'n/a (set DATABASE_URL)'} | ${target} | ${ratio.met === null ? '' : ratio.met ? 'met' : 'MISSED'} |`,
      );
    }
    console.log('\n| side | events/s | p50 ms | p90 ms | p99 ms |\n|---|---|---|---|---|');
    for (const side of sides) console.log(`| ${side.name} | ${side.perSecond} | ${side.p50} | ${side.p90} | ${side.p99} |`);
    console.log(
      `| end to end, POST → completed (sustained) | ${RATE} offered | ${sustained.endToEnd.p50} | ${sustained.endToEnd.p90} | ${sustained.endToEnd.p99} |`,
    );
    console.log(
      `| end to end, ACKNOWLEDGE=database (sustained) | ${RATE} offered | ${sustainedAtCommit.endToEnd.p50} | ${sustainedAtCommit.endToEnd.p90} | ${sustainedAtCommit.endToEnd.p99} |`,
    );
    console.log(`| backlog of ${drain.events} drained by one sweeper | ${drain.perSecond} | | | |`);
    console.log(`| ${release.events} held events released at ${RELEASE_RATE}/s, two sweepers | ${release.perSecond} | | | |`);
    console.log(
      `\nfairness: ${release.smallTenantEvents} events of a small tenant behind ${release.bigTenantEvents} of a big one all started ${release.smallTenantDoneSeconds} s into a ${release.seconds} s drain`,
    );
    console.log(`\nhistory events per flow (fulfilCheckout): ${sustained.historyEvents}`);
    console.log(`keyed: ${keyed.keyedPerSecond} Shopify orders/s completed against ${keyed.unkeyedPerSecond} checkouts/s, ${keyed.events} of each`);
    console.log(
      `hot key: ${hot.events} states of one order at ${HOT_KEY_RATE}/s for ${HOT_KEY_SECONDS} s: ${hot.applied} applied, ${hot.superseded} superseded, ${hot.lost} lost; key lag p50 ${hot.lagP50} ms, p99 ${hot.lagP99} ms; its entity ran ${hot.entityRuns} time(s) (continue-as-new), ${hot.terminated} terminated, ${hot.signalsFailed} signals to it failed`,
    );
    console.log(`CEL libraries, the filter ${celLibraries.filter} over Shopify's paid-order body, ${celLibraries.evaluations} times:`);
    console.log(`  ${celLine('cel-js (the filters’)', celLibraries.celJs)}\n  ${celLine('@bufbuild/cel', celLibraries.bufbuild)}`);
    console.log(`receiver with ACKNOWLEDGE=database and its load generator, one process: ${result.receiverPerCpuSecond} events per CPU-second`);
    for (const run of capacity) {
      console.log(
        `${run.workers} worker process(es): ${run.events} checkouts in ${run.seconds} s = ${run.perSecond} events/s, ${run.perCpuSecond} events per worker CPU-second; ${run.historyLength} history events, ${run.stateTransitions} state transitions each`,
      );
    }
    console.log(`\n| provider kind: its costliest refused delivery | refused, ms per MiB | a valid MiB, ms per MiB | target |\n|---|---|---|---|`);
    for (const kind of hostile.kinds) {
      console.log(
        `| ${kind.kind}: ${kind.worst.what} | ${round(kind.worst.msPerMiB, 1)} | ${kind.validMsPerMiB === null ? 'n/a' : round(kind.validMsPerMiB, 1)} | ≤ ${REFUSED_MS_PER_MIB_TARGET} ${kind.worst.msPerMiB <= REFUSED_MS_PER_MIB_TARGET ? 'met' : 'MISSED'} |`,
      );
    }
    console.log(`\n| provider kind: 25 MiB with no length | its limit | 413 after, ms | event loop held, max ms | memory grown, MiB |\n|---|---|---|---|---|`);
    for (const cost of largeBodies)
      console.log(`| ${cost.kind} | ${cost.limitBytes / 1024} KiB | ${round(cost.ms, 1)} | ${round(cost.maxDelayMs, 1)} | ${round(cost.memoryGrowthMiB, 1)} |`);
    console.log(
      `\n| console page, ${consolePages.events.toLocaleString('en')} events (generated in ${consolePages.generateSeconds} s) | p50 ms | p95 ms |\n|---|---|---|`,
    );
    for (const page of consolePages.pages) console.log(`| ${page.page} | ${page.p50} | ${page.p95} |`);
    console.log(
      `/healthz p99: ${round(hostile.healthz.idleP99Ms, 1)} ms at rest, ${round(hostile.healthz.underAttackP99Ms, 1)} ms while 8 clients send ${hostile.healthz.attack}`,
    );
    console.log(`written: ${path.relative(process.cwd(), dir) || '.'}/${stamp}.json and .svg`);
    const refusedMissed = hostile.kinds.some((kind) => kind.worst.msPerMiB > REFUSED_MS_PER_MIB_TARGET);
    if (SHORT) console.log('a short run (BENCH_SHORT=1): every measure ran; its figures are not judged');
    console.log(
      `keys at scale: ${scale.events} states of ${scale.keys} orders (${scale.sent} deliveries, ${scale.late} a ${SCALE_LATE_SECONDS} s late) in ${scale.seconds} s: ${scale.lost} lost, ${scale.outOfOrder} applied out of order, ${scale.notFulfilledOnce} orders not fulfilled exactly once`,
    );
    // A key that loses an event, applies one out of order or twice, whose entity the server
    // terminated (its history's limits) or refused a signal, fails even a short run.
    const keysFailed = hot.lost > 0 || hot.terminated > 0 || hot.signalsFailed > 0 || scale.lost > 0 || scale.outOfOrder > 0 || scale.notFulfilledOnce > 0;
    if (keysFailed) console.log('keys: FAILED (an event lost, applied out of order or twice, an entity terminated, or a signal to one failed)');
    process.exitCode = keysFailed || (!SHORT && (ratios.some((ratio) => ratio.met === false) || refusedMissed)) ? 1 : 0;
  } finally {
    await starts.close();
    await startsAtCommit.close();
    await work.close();
    await workAtCommit?.close();
    await seed?.close();
    await services.close();
    await stripe.close();
    await resend.close();
    await connection.close();
    await database?.drop();
  }
}

/**
 * Offers new events at BENCH_RATE per second for SUSTAIN_SECONDS with the worker running (an open
 * loop, as providers send); each one's completion is awaited through its handle. Completed ÷ started
 * counts only what happened inside the window: a worker that keeps up completes nearly all of it.
 */
/**
 * G15: KEYED_EVENTS paid Shopify orders, each of its own order (every one a turn on a new entity),
 * against as many Stripe checkouts: completed per second, POST to workflow result, at the bench's
 * concurrency, in two rounds that alternate which side goes first.
 */
async function keyedThroughput(client: Client, url: string) {
  const completed = async (deliveries: Array<Delivery & { path: string }>) => {
    const { seconds } = await drive(deliveries, async (event) => {
      await postExpecting(`${url}/webhooks/${event.path}`, event, 202);
      await client.workflow.getHandle(event.id).result();
    });
    return deliveries.length / seconds;
  };
  const unkeyed: number[] = [];
  const keyed: number[] = [];
  for (let pass = 0; pass < KEYED_PASSES; pass++) {
    const sides = [
      async () => unkeyed.push(await completed(Array.from({ length: KEYED_EVENTS }, () => ({ ...delivery(), path: 'stripe' })))),
      async () => keyed.push(await completed(Array.from({ length: KEYED_EVENTS }, () => shopifyOrderPaid({ topic: 'orders/paid' })))),
    ];
    for (const side of pass === 0 ? sides : [...sides].reverse()) await side();
  }
  const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
  return {
    events: KEYED_EVENTS,
    unkeyedPerSecond: round(total(unkeyed) / KEYED_PASSES),
    keyedPerSecond: round(total(keyed) / KEYED_PASSES),
    ratio: total(keyed) / total(unkeyed),
  };
}

/**
 * A workflow's result, when thousands of the load generator's own long polls wait at once: the
 * server refuses those past its namespace's concurrent poller limit ("namespace concurrent poller
 * limit exceeded", which `isUnavailable` knows), and this asks again, so that a refused poll is not
 * counted as a lost event.
 */
async function resultWhenPollable(client: Client, workflowId: string): Promise<unknown> {
  for (;;) {
    try {
      return await client.workflow.getHandle(workflowId).result();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      await delay(100);
    }
  }
}

/** Results the hot key asks for at once. */
const RESULT_POLLS = 200;

/** Runs at most `size` of the calls given at once; the others wait their turn, in order. */
function limited(size: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running < size) running++;
    else await new Promise<void>((turn) => waiting.push(turn));
    try {
      return await work();
    } finally {
      // The slot passes to the next waiting call, or is freed.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Signals to keys' entities that failed so far (`durable_webhooks_entity_signals_failed`, every flow and signal), from the in-process worker's metrics. */
async function entitySignalsFailed(metricsUrl: string): Promise<number> {
  const metrics = await (await request(metricsUrl)).body.text();
  return [...metrics.matchAll(/^durable_webhooks_entity_signals_failed(?:_total)?\{[^}]*\} (\d+)$/gm)].reduce((sum, [, value]) => sum + Number(value), 0);
}

/**
 * One hot key: HOT_KEY_RATE states a second of one Shopify order, each with a newer `updated_at`, for
 * HOT_KEY_SECONDS (an open loop, as a provider sends). Each must complete, applied or superseded by a
 * newer one; the key lag is POST to the workflow's close of the applied ones. At most RESULT_POLLS
 * results are asked at once: a long poll per event, 30,000 in a 10-minute run, took the load
 * generator's thread and the server's poller limit from the work measured. The entity's runs (one per
 * continue-as-new) are listed by its workflow ID, and none may have been terminated; no signal to
 * the entity may have failed (a run past Temporal's signals per run refuses them, and the key stops).
 */
async function hotKey(client: Client, url: string, metricsUrl: string) {
  const poll = limited(RESULT_POLLS);
  const orderId = 9_000_000_000 + Math.floor(Math.random() * 1_000_000);
  const lags: number[] = [];
  let superseded = 0;
  let lost = 0;
  const pending: Array<Promise<void>> = [];
  const failedBefore = await entitySignalsFailed(metricsUrl);
  const begin = performance.now();
  for (let index = 0; ; index++) {
    const due = begin + (index * 1000) / HOT_KEY_RATE;
    if (due >= begin + HOT_KEY_SECONDS * 1000) break;
    if (due > performance.now()) await delay(due - performance.now());
    const state = shopifyOrderPaid({ topic: 'orders/updated', orderId, updatedAt: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString() });
    const sentAt = Date.now();
    pending.push(
      postExpecting(`${url}/webhooks/shopify`, state, 202)
        .then(() =>
          poll(async () => {
            const outcome = (await resultWhenPollable(client, state.id)) as EventOutcome;
            if (outcome.outcome === 'superseded') superseded++;
            else lags.push((await client.workflow.getHandle(state.id).describe()).closeTime!.getTime() - sentAt);
          }),
        )
        .catch(() => void lost++),
    );
  }
  await Promise.all(pending);
  const signalsFailed = (await entitySignalsFailed(metricsUrl)) - failedBefore;
  const runs: string[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${entityWorkflowId('fulfilShopifyOrder', 'shopify', String(orderId))}'` }))
    runs.push(run.status.name);
  const sorted = lags.sort((a, b) => a - b);
  const percentile = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return {
    events: pending.length,
    rate: HOT_KEY_RATE,
    seconds: HOT_KEY_SECONDS,
    applied: lags.length,
    superseded,
    lost,
    lagP50: percentile(0.5),
    lagP99: percentile(0.99),
    entityRuns: runs.length,
    signalsFailed,
    terminated: runs.filter((status) => status === 'TERMINATED').length,
  };
}

/**
 * Keys at scale: SCALE_STATES states of each of SCALE_KEYS Shopify orders (the first ones unpaid),
 * shuffled, a fifth delivered twice, one in twenty held back SCALE_LATE_SECONDS after the rest were
 * sent. Per order, the applied states must make one chain (each result names the one applied
 * before it) in increasing version, and its confirmation email must go out exactly once.
 */
async function keysAtScale(client: Client, url: string, resend: Awaited<ReturnType<typeof startResendStandIn>>) {
  const base = 8_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;
  const orders = Array.from({ length: SCALE_KEYS }, (_, index) => base + index);
  const states = orders.flatMap((orderId) =>
    Array.from({ length: SCALE_STATES }, (_, version) => ({
      version,
      delivery: shopifyOrderPaid({
        topic: ['orders/create', 'orders/updated', 'orders/paid'][version % 3],
        orderId,
        financialStatus: version < 2 ? 'pending' : 'paid',
        updatedAt: new Date(Date.UTC(2026, 0, 1) + version * 60_000).toISOString(),
      }),
    })),
  );
  const late = states.filter((_, index) => index % 20 === 7);
  const onTime = states.filter((_, index) => index % 20 !== 7);
  const deliveries = [...onTime, ...onTime.filter((_, index) => index % 5 === 0)].sort(() => Math.random() - 0.5);
  const begin = performance.now();
  await drive(deliveries, async ({ delivery: state }) => {
    const response = await request(`${url}/webhooks/shopify`, { method: 'POST', headers: state.headers, body: state.body });
    await response.body.dump();
    if (response.statusCode !== 202 && response.statusCode !== 200) throw new Error(`shopify: ${response.statusCode}`);
  });
  await delay(SCALE_LATE_SECONDS * 1000);
  await drive(late, ({ delivery: state }) => postExpecting(`${url}/webhooks/shopify`, state, 202));
  let lost = 0;
  const outcomes = new Map<string, EventOutcome>();
  await drive(states, async ({ delivery: state }) => {
    await client.workflow
      .getHandle(state.id)
      .result()
      .then(
        (outcome: EventOutcome) => void outcomes.set(state.id, outcome),
        () => void lost++,
      );
  });
  const seconds = round((performance.now() - begin) / 1000);
  let outOfOrder = 0;
  let notFulfilledOnce = 0;
  for (const orderId of orders) {
    const ofOrder = states.filter(({ delivery }) => delivery.orderId === orderId);
    const applied = ofOrder.filter(({ delivery }) => outcomes.get(delivery.id) && outcomes.get(delivery.id)!.outcome !== 'superseded');
    // The chain from the first applied (after nothing) through each one's successor.
    const chain: number[] = [];
    for (let after: string | null = null; ; ) {
      const next = applied.find(({ delivery }) => outcomes.get(delivery.id)!.entity?.after === after);
      if (!next) break;
      chain.push(next.version);
      after = next.delivery.id;
    }
    if (chain.length !== applied.length || chain.some((version, index) => index > 0 && version <= chain[index - 1]!)) outOfOrder++;
    // The confirmation's idempotency key starts with the ID of the event that fulfilled the order.
    const ids = new Set(ofOrder.map(({ delivery }) => delivery.id));
    if (resend.emails.filter((email) => ids.has(email.idempotencyKey?.split(':')[0] ?? '')).length !== 1) notFulfilledOnce++;
  }
  return { keys: SCALE_KEYS, events: states.length, sent: deliveries.length + late.length, late: late.length, seconds, lost, outOfOrder, notFulfilledOnce };
}

async function sustain(client: Client, url: string) {
  const started: Array<{ id: string; sentAt: number; completedAt?: number }> = [];
  const pending: Array<Promise<void>> = [];
  const begin = performance.now();
  const end = begin + SUSTAIN_SECONDS * 1000;
  for (let index = 0; ; index++) {
    const due = begin + (index * 1000) / RATE;
    if (due >= end) break;
    if (due > performance.now()) await delay(due - performance.now());
    const event = delivery();
    const entry: (typeof started)[number] = { id: event.id, sentAt: performance.now() };
    started.push(entry);
    pending.push(
      postExpecting(url, event, 202)
        // With ACKNOWLEDGE=database the workflow starts after the answer: wait for it to exist.
        .then(async () => {
          while (
            !(await client.workflow
              .getHandle(event.id)
              .describe()
              .then(
                () => true,
                () => false,
              ))
          )
            await delay(5);
        })
        .then(() => client.workflow.getHandle(event.id).result())
        .then(() => void (entry.completedAt = performance.now())),
    );
  }
  const windowEnd = performance.now();
  await Promise.all(pending);
  const endToEnd = new Side('end to end');
  endToEnd.add({ latencies: started.map((entry) => entry.completedAt! - entry.sentAt), seconds: 1 });
  const samples = await Promise.all(started.slice(0, 5).map(async ({ id }) => (await client.workflow.getHandle(id).fetchHistory()).events!.length));
  const { p50, p90, p99 } = endToEnd.summary();
  return {
    startedInWindow: started.length,
    completedInWindow: started.filter((entry) => entry.completedAt! <= windowEnd).length,
    endToEnd: { p50, p90, p99 },
    historyEvents: round(samples.reduce((sum, count) => sum + count, 0) / samples.length, 1),
  };
}

/**
 * Commits BENCH_EVENTS bodies through a receiver with ACKNOWLEDGE=database whose Temporal does not
 * answer (nothing starts them), then lets one sweeper with a working client start them all: starts
 * per second from its start until the backlog is empty.
 */
async function drainBacklog(client: Client, db: Database, address: string, taskQueue: string, rawPerSecond: number) {
  const unreachable = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }) });
  const config = loadReceiverConfig({
    PORT: '0',
    STRIPE_WEBHOOK_SECRET: SECRET,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_ADDRESS: address,
    ACKNOWLEDGE: 'database',
  });
  const down = await startReceiver(config, unreachable, silentLogger, db);
  const events = Array.from({ length: EVENTS }, delivery);
  await drive(events, (event) => postExpecting(`${down.url}/webhooks/stripe`, event, 202));
  await down.close();
  await unreachable.connection.close();
  // Every failed fast path leaves its row due again within a second: start the clock when all are due.
  await db.query(`UPDATE event_bodies SET start_due_at = now() WHERE started_at IS NULL`);
  const sweeper = new StartSweeper(db, client, { taskQueue, logger: silentLogger, pollMs: 50 });
  const begin = performance.now();
  await sweeper.start();
  while ((await startBacklog(db)).count > 0) await delay(20);
  const seconds = (performance.now() - begin) / 1000;
  await sweeper.stop();
  return { events: events.length, perSecond: round(events.length / seconds), rawPerSecond: round(rawPerSecond) };
}

/**
 * Holds the source, commits a big tenant's events then a small tenant's (20) through a receiver with
 * ACKNOWLEDGE=database, releases the hold at RELEASE_RATE and lets two sweepers drain it: the
 * measured starts per second (from the first start to the last) and when the small tenant's last
 * one started, from the drain's first start.
 */
async function releaseHeld(client: Client, db: Database, taskQueue: string) {
  const config = loadReceiverConfig({ PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET, TEMPORAL_TASK_QUEUE: taskQueue, ACKNOWLEDGE: 'database' });
  const receiver = await startReceiver(config, client, silentLogger, db);
  const hold = await createHold(db, { source: 'stripe', reason: 'bench', by: 'bench' });
  const big = Array.from({ length: Math.max(EVENTS - 20, 20) }, () => delivery('acct_big'));
  const small = Array.from({ length: 20 }, () => delivery('acct_small'));
  await drive(big, (event) => postExpecting(`${receiver.url}/webhooks/stripe`, event, 202));
  await drive(small, (event) => postExpecting(`${receiver.url}/webhooks/stripe`, event, 202));
  await receiver.close();
  const sweepers = [0, 1].map(() => new StartSweeper(db, client, { taskQueue, logger: silentLogger }));
  await releaseHolds(db, { id: hold.id }, { rate: RELEASE_RATE, by: 'bench' });
  await Promise.all(sweepers.map((sweeper) => sweeper.start()));
  while ((await startBacklog(db)).count > 0) await delay(50);
  await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
  const ids = [...big, ...small].map((event) => event.id);
  const times = async (of: string[]) =>
    (await db.query<{ at: Date }>('SELECT started_at AS at FROM event_bodies WHERE event_id = ANY($1) ORDER BY started_at', [of])).rows.map((row) =>
      new Date(row.at).getTime(),
    );
  const all = await times(ids);
  const smallTimes = await times(small.map((event) => event.id));
  const seconds = (all.at(-1)! - all[0]!) / 1000;
  return {
    events: ids.length,
    bigTenantEvents: big.length,
    smallTenantEvents: small.length,
    seconds: round(seconds),
    perSecond: round((all.length - 1) / seconds),
    smallTenantDoneSeconds: round((smallTimes.at(-1)! - all[0]!) / 1000),
  };
}

main().catch((error: Error) => {
  console.error(`bench failed: ${error.stack ?? error.message}`);
  process.exit(1);
});

/** User and system CPU seconds a process has used (Linux /proc; every thread of it). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CAPACITY_EVENTS checkouts received (bodies stored, workflows started) on a task queue no worker
 * polls yet, then drained by `workers` `npm run worker` processes: events completed per second, per
 * CPU-second the worker processes used meanwhile, and one checkout's history length and state
 * transitions (what it costs Temporal).
 */
async function workerCapacity(
  client: Client,
  workers: number,
  env: NodeJS.ProcessEnv,
  receiverConfig: (taskQueue: string) => ReturnType<typeof loadReceiverConfig>,
  db: Database,
) {
  const queue = `bench-capacity-${workers}-${randomUUID()}`;
  const receiver = await startReceiver(receiverConfig(queue), client, silentLogger, db);
  const events = Array.from({ length: CAPACITY_EVENTS }, delivery);
  try {
    await drive(events, (event) => postExpecting(`${receiver.url}/webhooks/stripe`, event, 202));
  } finally {
    await receiver.close();
  }
  const processes = Array.from({ length: workers }, () =>
    spawnNpmScript('worker', { ...env, TEMPORAL_TASK_QUEUE: queue, WORKER_METRICS_ADDRESS: '', NODE_ENV: undefined }),
  );
  try {
    await Promise.all(processes.map((worker) => worker.waitFor('worker polling')));
    const cpuBefore = processes.map((worker) => cpuSecondsOf(worker.child.pid!));
    const began = performance.now();
    await Promise.all(events.map((event) => client.workflow.getHandle(event.id).result()));
    const seconds = (performance.now() - began) / 1000;
    const cpu = processes.reduce((sum, worker, index) => sum + cpuSecondsOf(worker.child.pid!) - cpuBefore[index]!, 0);
    const { raw } = await client.workflow.getHandle(events[0]!.id).describe();
    return {
      workers,
      events: events.length,
      seconds: round(seconds),
      perSecond: round(events.length / seconds),
      perCpuSecond: round(events.length / Math.max(cpu, 0.01)),
      historyLength: Number(raw.workflowExecutionInfo?.historyLength ?? 0),
      stateTransitions: Number(raw.workflowExecutionInfo?.stateTransitionCount ?? 0),
    };
  } finally {
    for (const worker of processes) worker.child.kill('SIGTERM');
    await Promise.all(processes.map((worker) => worker.exited));
  }
}
