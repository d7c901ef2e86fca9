import { performance } from 'node:perf_hooks';
import { startLocalPostgres } from '../../src/cluster/postgres';
import { openDatabase } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { silentLogger } from '../../src/core/logger';
import { EventWaits, registerWait, waitKeysOf } from '../../src/intake/waits';
import { lazyClient } from '../../src/temporal/connection';
import { recordCheckoutRefundFlow } from '../../workflows';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { storeStripeEvent } from '../support/stored-events';
import { benchSize } from './settings';

/** Open waits, and stored events of the awaited type, on other keys, in the loaded measurement (BENCH_WAITS_LOADED). */
export const WAITS_LOADED = benchSize('WAITS_LOADED', 100_000, 1_000);
/** Arrivals and registrations timed in each measurement. */
const SAMPLES = benchSize('WAIT_SAMPLES', 500, 20);

const wait = recordCheckoutRefundFlow.wait('refund');
const POINTER = '/data/object/payment_intent';

/**
 * G17: what open waits cost (docs/flows.md#wait-for-another-event). Two steps are timed, one at a
 * time on PostgreSQL: matching a new awaited event against the open waits (`EventWaits.arrived`,
 * after the intake stores it), and a new wait's registration with its look through the stored
 * events (`registerWait`, the activity). Each is timed on an empty store, then with WAITS_LOADED
 * open waits and as many stored refunds on other keys: the loaded ÷ empty time of the slower step.
 * The keys' indexes keep it near 1; a scan would grow with the load.
 */
export async function measureWaits() {
  const local = process.env.DATABASE_URL ? undefined : startLocalPostgres({ port: await freePort(), user: 'webhooks' });
  const database = await createTestDatabase({ serverUrl: local?.url });
  const db = await openDatabase({ url: database.url });
  const client = lazyClient({ namespace: 'default', connectionOptions: { address: '127.0.0.1:1' } });
  try {
    await migrate(db);
    const waits = new EventWaits(db, client, silentLogger);
    let round = 0;
    const measure = async () => {
      round++;
      const arrivals: number[] = [];
      const registrations: number[] = [];
      for (let index = 0; index < SAMPLES; index++) {
        const paymentIntent = `pi_bench_${round}_${index}`;
        const id = `evt_bench_${round}_${index}`;
        const payload = { id, type: wait.type, data: { object: { id: `ch_${index}`, payment_intent: paymentIntent, amount_refunded: 100 } } };
        await storeStripeEvent(db, {
          source: 'bench',
          id,
          type: wait.type,
          raw: Buffer.from(JSON.stringify(payload)),
          waitKeys: waitKeysOf(wait.type, payload),
        });
        let started = performance.now();
        await waits.arrived('bench', id);
        arrivals.push(performance.now() - started);
        started = performance.now();
        await registerWait(db, {
          workflowId: `bench-waiter-${round}-${index}`,
          source: 'bench',
          wait,
          waiting: { paymentIntent: `pi_never_${round}_${index}` },
        });
        registrations.push(performance.now() - started);
      }
      return { arrivalMs: median(arrivals), registrationMs: median(registrations) };
    };
    await measure();
    const empty = await measure();
    await load(db, WAITS_LOADED);
    await measure();
    const loaded = await measure();
    return {
      loaded: WAITS_LOADED,
      samples: SAMPLES,
      empty: { arrivalMs: rounded(empty.arrivalMs), registrationMs: rounded(empty.registrationMs) },
      withLoad: { arrivalMs: rounded(loaded.arrivalMs), registrationMs: rounded(loaded.registrationMs) },
      ratio: Math.max(loaded.arrivalMs / empty.arrivalMs, loaded.registrationMs / empty.registrationMs),
    };
  } finally {
    await client.connection.close();
    await db.close();
    await database.drop();
    local?.remove();
  }
}

/** `count` open waits and as many stored refunds, each on a key of its own that nothing measured uses. */
async function load(db: Awaited<ReturnType<typeof openDatabase>>, count: number): Promise<void> {
  const key = (column: string) => `'${POINTER}=' || to_json('pi_load_' || ${column})::text`;
  await db.query(
    `INSERT INTO waiters (workflow_id, wait, flow, source, type, wait_key, match, fields, waiting, until)
     SELECT 'bench-load-' || n, $1, $2, 'bench', $3, ${key('n')}, $4, '{}', jsonb_build_object('paymentIntent', 'pi_load_' || n), now() + interval '30 days'
     FROM generate_series(1, $5) n`,
    [wait.name, wait.flow, wait.type, wait.match, count],
  );
  await db.query(
    `INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, start, started_at, wait_keys, waits_matched_at)
     SELECT 'bench', 'evt_load_' || n, 'evt_load_' || n, 'stripe', 'delivery', 'application/json', '{}',
       convert_to(json_build_object('id', 'evt_load_' || n, 'data', json_build_object('object', json_build_object('payment_intent', 'pi_load_' || n, 'amount_refunded', 100)))::text, 'UTF8'),
       100, md5(n::text), now() - interval '1 hour', jsonb_build_object('flow', 'recordEvent', 'input', jsonb_build_object('type', $1::text)), now(), ARRAY[${key('n')}], now()
     FROM generate_series(1, $2) n`,
    [wait.type, count],
  );
  await db.query('ANALYZE waiters');
  await db.query('ANALYZE event_bodies');
  // The load is what a wait finds: a wait on the first loaded key finds its stored refund.
  const found = await registerWait(db, { workflowId: 'bench-load-check', source: 'bench', wait, waiting: { paymentIntent: 'pi_load_1' } });
  if (!('matched' in found)) throw new Error('A wait does not find the loaded refunds: they are not keyed as the intake keys them.');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const rounded = (value: number) => Math.round(value * 1000) / 1000;
