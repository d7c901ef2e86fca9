import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { startLocalPostgres } from '../../src/cluster/postgres';
import { loadReceiverConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { silentLogger } from '../../src/core/logger';
import { startReceiver } from '../../src/receiver';
import { lazyClient } from '../../src/temporal/connection';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { benchSize } from './settings';

/** Events generated for the console's measurement (BENCH_CONSOLE_EVENTS). */
export const CONSOLE_EVENTS = benchSize('CONSOLE_EVENTS', 1_000_000, 5_000);
/** Every list and filter page answers within this at p95. */
export const CONSOLE_P95_TARGET_MS = 200;
/** Requests per page measured. */
const REQUESTS = benchSize('CONSOLE_REQUESTS', 40, 2);
const ADMIN_TOKEN = 'bench-console-admin-token-0123456789abcdef';

export interface PageTiming {
  page: string;
  p50: number;
  p95: number;
}

/**
 * G14: the console on CONSOLE_EVENTS generated events (four sources, thirty types, a thousand
 * tenants, a month of receipt times, and the statuses of a bad week: mostly completed, some failed
 * in five ways, some running, held, waiting, dead-lettered and ignored). Each list and filter page
 * is asked for REQUESTS times over HTTP, signed in, one at a time; their p95 is the figure.
 */
export async function measureConsole(): Promise<{ events: number; generateSeconds: number; pages: PageTiming[] }> {
  // Without DATABASE_URL, a PostgreSQL of its own, for this measure alone: nothing after it sees it.
  const local = process.env.DATABASE_URL ? undefined : startLocalPostgres({ port: await freePort(), user: 'webhooks' });
  const database = await createTestDatabase({ serverUrl: local?.url });
  const db = await openDatabase({ url: database.url });
  try {
    await migrate(db);
    const started = performance.now();
    await generate(db.query.bind(db));
    const generateSeconds = Math.round((performance.now() - started) / 100) / 10;

    const client = lazyClient({ namespace: 'default', connectionOptions: { address: '127.0.0.1:1' } });
    const receiver = await startReceiver(
      loadReceiverConfig({ PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN, STRIPE_WEBHOOK_SECRET: 'whsec_bench' }),
      client,
      silentLogger,
      db,
    );
    try {
      const signIn = await request(`${receiver.url}/console/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${ADMIN_TOKEN}`,
      });
      await signIn.body.dump();
      const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
      const get = async (path: string) => {
        const response = await request(`${receiver.url}${path}`, { headers: { cookie } });
        const html = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
        return html;
      };
      const first = await get('/console/events');
      const next = /rel="next" href="([^"]+)"/.exec(first)![1]!.replace(/&amp;/g, '&');
      const [group] = /\/console\/failures\/([0-9a-f]{16})/.exec(await get('/console/failures')) ?? [];
      const pages = [
        '/console',
        '/console/events',
        next,
        '/console/events?source=github',
        '/console/events?type=invoice.paid',
        '/console/events?type=customer.subscription.*',
        '/console/events?status=failed',
        '/console/events?status=held',
        '/console/events?status=dead-lettered',
        '/console/events?status=running&source=stripe',
        '/console/events?tenant=acct_42',
        '/console/events?errorClass=sendEmail+%E2%80%BA+EmailRejected',
        '/console/events?since=2h',
        '/console/events?source=stripe&type=checkout.*&since=7d',
        '/console/failures',
        ...(group ? [`/console/events?group=${group.split('/').pop()}&status=failed`] : []),
        '/console/refused',
      ];
      const timings: PageTiming[] = [];
      for (const page of pages) {
        // A filter that matched nothing would measure an empty page: each list must show rows.
        if (page.startsWith('/console/events') && !(await get(page)).includes('<tbody>'))
          throw new Error(`${page} lists no event: the generated rows do not match it.`);
        const latencies: number[] = [];
        for (let index = 0; index < REQUESTS; index++) {
          const sent = performance.now();
          await get(page);
          latencies.push(performance.now() - sent);
        }
        latencies.sort((a, b) => a - b);
        timings.push({
          page: page.startsWith('/console/events?after=') ? '/console/events, second page (cursor)' : page,
          p50: round(latencies[Math.floor(latencies.length / 2)]!),
          p95: round(latencies[Math.ceil(latencies.length * 0.95) - 1]!),
        });
      }
      return { events: CONSOLE_EVENTS, generateSeconds, pages: timings };
    } finally {
      await receiver.close();
      await client.connection.close();
    }
  } finally {
    await db.close();
    await database.drop();
    local?.remove();
  }
}

const round = (value: number) => Math.round(value * 10) / 10;

/** The generated body store, in batches of 100,000 rows, then analysed as autovacuum would. */
export async function generate(query: (sql: string, params?: unknown[]) => Promise<unknown>): Promise<void> {
  const batch = 100_000;
  for (let offset = 0; offset < CONSOLE_EVENTS; offset += batch) {
    await query(
      `INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, start, started_at, tenant, held_by, ignored_at, dead_lettered_at, ledger_status, error_class)
       SELECT source, id, id, provider, CASE WHEN n % 50 = 0 THEN 'backfill' ELSE 'delivery' END, 'application/json', '{}'::jsonb, convert_to('{"id":"' || id || '"}', 'UTF8'), 40, md5(id),
         received_at, jsonb_build_object('flow', 'recordEvent', 'summary', id, 'input', jsonb_build_object('id', id, 'type', type, 'source', source)),
         CASE WHEN state IN ('held', 'waiting', 'dead') THEN NULL ELSE received_at END, tenant,
         CASE WHEN state = 'held' THEN 'hold_bench' END, CASE WHEN state = 'ignored' THEN received_at END, CASE WHEN state = 'dead' THEN received_at END,
         CASE state WHEN 'completed' THEN 'completed' WHEN 'failed' THEN 'failed' WHEN 'running' THEN 'processing' END,
         CASE WHEN state = 'failed' THEN (ARRAY['sendEmail › EmailRejected', 'chargeOrder › CardDeclined', 'markPaymentIntentFulfilled › StripeInvalidRequest', 'saveOrder › Timeout', 'PaymentDeclined'])[1 + (n / 100) % 5] END
       FROM (
         SELECT n, 'evt_bench_' || n AS id,
           (ARRAY['stripe', 'stripe', 'stripe', 'github', 'shopify', 'standard'])[1 + n % 6] AS source,
           (ARRAY['stripe', 'stripe', 'stripe', 'github', 'shopify', 'standard-webhooks'])[1 + n % 6] AS provider,
           (ARRAY['checkout.session.completed', 'invoice.paid', 'customer.subscription.updated', 'customer.subscription.created', 'charge.refunded', 'payment_intent.succeeded',
                  'issues.opened', 'pull_request.opened', 'push', 'orders/paid', 'orders/create', 'order.created'])[1 + (n / 7) % 12] AS type,
           CASE WHEN n % 10 < 7 THEN 'acct_' || (n / 13) % 1000 END AS tenant,
           now() - (n::float8 / $2) * interval '30 days' AS received_at,
           CASE WHEN n % 1000 = 1 THEN 'dead' WHEN n % 200 = 3 THEN 'held' WHEN n % 200 = 5 THEN 'waiting' WHEN n % 100 = 7 THEN 'failed'
                WHEN n % 100 = 9 THEN 'running' WHEN n % 50 = 11 THEN 'ignored' ELSE 'completed' END AS state
         FROM generate_series($1::bigint, $1::bigint + $3 - 1) AS n) generated`,
      [offset, CONSOLE_EVENTS, Math.min(batch, CONSOLE_EVENTS - offset)],
    );
  }
  await query('ANALYZE event_bodies');
}
