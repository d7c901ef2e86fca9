import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { prepareValue } from 'pg/lib/utils';
import { openDatabase, PREPARE_FROM_ROWS, STATISTICS_CHECK_EVERY, type Database, type Queryable, type Statement } from '../../src/db/database';
import { loadBody } from '../../src/db/event-bodies';
import { claimKey, releaseKey } from '../../src/db/entities';
import { markStarted } from '../../src/db/inbox';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { storeStripeEvent } from '../support/stored-events';

/**
 * What every delivery and every event's workflow run against PostgreSQL is prepared once per
 * connection (src/db/database.ts), unless DATABASE_URL says prepare=false: PostgreSQL planned each
 * of them anew for every call (docs/benchmarks.md). Prepared once PostgreSQL's statistics count
 * PREPARE_FROM_ROWS bodies: a plan kept before then read every row of a source.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
  // Bodies enough: the next database opened analyzes them, and prepares from then on.
  await db.transaction(deliverAndRun);
  await storeMany(db);
});
afterAll(() => db.drop());

/** One delivery stored and started, then its event's workflow: claimed, its key held and let go, its body read, completed. */
async function deliverAndRun(tx: Queryable): Promise<void> {
  const event = { source: 'stripe', id: `evt_${randomUUID()}`, type: 'checkout.session.completed', raw: Buffer.from('{}') };
  expect(await storeStripeEvent(tx, event)).toMatchObject({ stored: true });
  await markStarted(tx, [{ source: event.source, eventId: event.id }]);
  const claim = { source: event.source, eventId: event.id, type: event.type, workflowId: event.id, firstExecutionRunId: randomUUID() };
  expect(await claimEvent(tx, claim)).toBe('claimed');
  const ref = { flow: 'fulfilCheckout', source: event.source, key: `cs_${randomUUID()}` };
  const request = { eventId: event.id, workflowId: event.id, type: event.type, version: [1] };
  expect(await claimKey(tx, ref, { eventId: event.id, request, mayHold: true })).toMatchObject({ held: true });
  expect(await loadBody(tx, event.source, event.id)).toMatchObject({ eventId: event.id });
  expect(await releaseKey(tx, ref, { holder: event.id, entityId: 'entity', applied: { eventId: event.id, version: [1] } })).toMatchObject({
    toEntity: false,
  });
  await completeEvent(tx, { source: event.source, eventId: event.id, status: 'completed', outcome: null });
  const { rows } = await tx.query<{ started: boolean; status: string }>(
    `SELECT b.started_at IS NOT NULL AS started, p.status FROM event_bodies b JOIN processed_events p USING (source, event_id)
     WHERE b.source = $1 AND b.event_id = $2`,
    [event.source, event.id],
  );
  expect(rows).toEqual([{ started: true, status: 'completed' }]);
}

/** PREPARE_FROM_ROWS more bodies: copies of one stored row under other event IDs. */
const storeMany = (on: Queryable) =>
  on.query(
    `INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, start)
     SELECT source, event_id || '-' || n, workflow_id || '-' || n, provider, via, content_type, signature_headers, body, size, md5(event_id || n), received_at, start
     FROM (SELECT * FROM event_bodies LIMIT 1) AS one, generate_series(1, $1::int) AS n`,
    [PREPARE_FROM_ROWS],
  );

const prepared = async (tx: Queryable) =>
  (await tx.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((row) => row.name);

const preparedWhileRunning = (database: Database) =>
  database.transaction(async (tx) => {
    await deliverAndRun(tx);
    return prepared(tx);
  });

const ALL = ['claim-event', 'claim-key', 'complete-event', 'load-body', 'mark-started', 'release-key', 'store-body'];

it("prepares a delivery's and its event's statements on their connection", async () => {
  const analyzed = await openDatabase({ url: db.url });
  try {
    expect(await preparedWhileRunning(analyzed)).toEqual(ALL);
  } finally {
    await analyzed.close();
  }
});

it('plans each for its values until PostgreSQL counts PREPARE_FROM_ROWS bodies, then analyzes them and prepares', async () => {
  const fresh = await openTestDatabase();
  await fresh.transaction(deliverAndRun);
  // Opened on a few rows: it looks at the statistics first.
  const reopened = await openDatabase({ url: fresh.url });
  try {
    const counted = async () =>
      (await fresh.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'event_bodies'::regclass")).rows[0]!.n;
    // Six calls of each on a few rows: a statement prepared now would keep a plan made for a few rows.
    expect(
      await reopened.transaction(async (tx) => {
        for (let call = 0; call < 6; call++) await deliverAndRun(tx);
        return prepared(tx);
      }),
    ).toEqual([]);
    await storeMany(fresh);
    expect(await counted()).toBeLessThan(PREPARE_FROM_ROWS);
    // Every STATISTICS_CHECK_EVERY-th unprepared statement looks again: seven for a delivery and its event.
    for (let call = 0; call < Math.ceil(STATISTICS_CHECK_EVERY / 7); call++) await reopened.transaction(deliverAndRun);
    await eventually('the body store is analyzed', async () => (await counted()) >= PREPARE_FROM_ROWS);
    await eventually('the statements are prepared', async () => (await preparedWhileRunning(reopened)).length === ALL.length);
  } finally {
    await reopened.close();
    await fresh.drop();
  }
});

it('prepares none when DATABASE_URL says prepare=false', async () => {
  const url = new URL(db.url);
  url.searchParams.set('prepare', 'false');
  const unprepared = await openDatabase({ url: url.href });
  try {
    expect(await preparedWhileRunning(unprepared)).toEqual([]);
  } finally {
    await unprepared.close();
  }
});

/** The plan PostgreSQL would run for a prepared statement's call: EXPLAIN EXECUTE, its values written out. */
async function planOf(tx: Queryable, name: string, values: unknown[]): Promise<string> {
  const literal = (value: unknown) => {
    const prepared = prepareValue(value);
    if (prepared === null) return 'NULL';
    return Buffer.isBuffer(prepared) ? `'\\x${prepared.toString('hex')}'` : pg.escapeLiteral(String(prepared));
  };
  const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE "${name}"(${values.map(literal).join(', ')})`);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

it('keeps one plan of each after its first five calls, and it reads rows by their keys', async () => {
  // PostgreSQL plans a prepared statement's first five calls for their values, then keeps one
  // generic plan if it costs no more than theirs did.
  const fresh = await openDatabase({ url: db.url });
  try {
    const { plans, kept } = await fresh.transaction(async (tx) => {
      const calls = new Map<string, unknown[]>();
      const recorded: Queryable = {
        query: (sql: string | Statement, params?: unknown[]) => {
          if (typeof sql !== 'string') calls.set(sql.name, params ?? []);
          return tx.query(sql, params);
        },
      };
      for (let call = 0; call < 8; call++) await deliverAndRun(recorded);
      const { rows } = await tx.query<{ name: string; generic_plans: number; custom_plans: number }>(
        'SELECT name, generic_plans::int, custom_plans::int FROM pg_prepared_statements ORDER BY name',
      );
      return { plans: rows, kept: await Promise.all([...calls].map(async ([name, values]) => ({ name, plan: await planOf(tx, name, values) }))) };
    });
    expect(plans).toHaveLength(7);
    for (const plan of plans) expect(plan).toEqual({ name: plan.name, custom_plans: 5, generic_plans: 3 });
    expect(kept.map(({ name }) => name).sort()).toEqual(ALL);
    // No scan of a table, nor of an index by its first column alone (every row of a source).
    for (const { name, plan } of kept) {
      expect({ name, plan }).toEqual({
        name,
        plan: expect.not.stringMatching(/Seq Scan on (event_bodies|processed_events|entity_keys)\b|event_bodies_source_received/),
      });
    }
  } finally {
    await fresh.close();
  }
});
