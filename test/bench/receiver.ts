/**
 * `npm run bench`: how fast the receiver makes events durable. A real Temporal dev server (SQLite,
 * like `npm run dev`), the receiver in this process, signed Stripe deliveries sent over HTTP:
 * new events (verify + start a workflow) and copies of them (verify + the engine's refusal).
 * Prints throughput and latency percentiles against the targets below; exits 1 if one is missed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import Stripe from 'stripe';
import { loadReceiverConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { startDevServer } from '../../src/dev/dev-server';
import { silentLogger } from '../../src/logger';
import { startReceiver } from '../../src/receiver';
import { prepareNamespace } from '../../src/temporal/namespace';
import { freePort } from '../support/ports';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECRET = 'whsec_bench';
/** Targets on the 2-core reference machine with the SQLite dev server (WAL; without it, about 66 new events/s). */
const TARGETS = { newPerSecond: 75, newP99Ms: 500, duplicatePerSecond: 150, duplicateP99Ms: 300 };

const webhooks = new Stripe('sk_test_bench').webhooks;

async function main(): Promise<void> {
  const address = `127.0.0.1:${await freePort(1000)}`;
  const devServer = await startDevServer({ address, dataDir: mkdtempSync(path.join(tmpdir(), 'dw-bench-')), stdio: 'ignore' });
  const connection = await Connection.connect({ address });
  await prepareNamespace(connection, 'default');
  const db = await openDatabase({ embeddedDir: mkdtempSync(path.join(tmpdir(), 'dw-bench-db-')) });
  await migrate(db);
  const receiver = await startReceiver(
    loadReceiverConfig({ PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET, TEMPORAL_TASK_QUEUE: 'bench-no-worker' }),
    new Client({ connection }),
    silentLogger,
    db,
  );
  try {
    const deliveries = Array.from({ length: EVENTS }, (_, index) => {
      const body = JSON.stringify({ id: `evt_bench_${Date.now()}_${index}`, object: 'event', type: 'checkout.session.completed', created: Math.floor(Date.now() / 1000), data: { object: { id: `cs_${index}` } } });
      return { body, headers: { 'content-type': 'application/json', 'stripe-signature': webhooks.generateTestHeaderString({ payload: body, secret: SECRET }) } };
    });
    const fresh = await run(`${receiver.url}/webhooks/stripe`, deliveries, 202);
    const copies = await run(`${receiver.url}/webhooks/stripe`, deliveries, 200);
    report('new events', fresh, TARGETS.newPerSecond, TARGETS.newP99Ms);
    report('duplicates', copies, TARGETS.duplicatePerSecond, TARGETS.duplicateP99Ms);
    const missed = [fresh.perSecond < TARGETS.newPerSecond, fresh.p99 > TARGETS.newP99Ms, copies.perSecond < TARGETS.duplicatePerSecond, copies.p99 > TARGETS.duplicateP99Ms];
    process.exitCode = missed.some(Boolean) ? 1 : 0;
  } finally {
    await receiver.close();
    await connection.close();
    await db.close();
    await devServer.stop();
  }
}

async function run(url: string, deliveries: Array<{ body: string; headers: Record<string, string> }>, expectedStatus: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++]!;
        const sent = performance.now();
        const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
        await response.arrayBuffer();
        if (response.status !== expectedStatus) throw new Error(`expected ${expectedStatus}, got ${response.status}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { count: latencies.length, perSecond: latencies.length / seconds, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

function report(name: string, result: Awaited<ReturnType<typeof run>>, perSecondTarget: number, p99Target: number): void {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  console.log(
    `${name.padEnd(11)} ${result.count} requests, concurrency ${CONCURRENCY}: ${result.perSecond.toFixed(0)}/s (target ≥ ${perSecondTarget}, ${ok(result.perSecond >= perSecondTarget)}), ` +
      `p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms (target ≤ ${p99Target}, ${ok(result.p99 <= p99Target)})`,
  );
}

main().catch((error: Error) => {
  console.error(`bench failed: ${error.message}`);
  process.exit(1);
});
