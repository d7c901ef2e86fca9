import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Queryable } from '../../src/db/database';
import { markStarted } from '../../src/db/inbox';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { storeStripeEvent } from '../support/stored-events';

/**
 * A delivery waits for one flush of PostgreSQL's WAL, not two: its body's insert commits with
 * `synchronous_commit` as the server has it, and the mark of its start, a hint a sweeper makes
 * again if a crash loses it, commits without waiting (src/db/inbox.ts, docs/benchmarks.md).
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.drop());

const stored = async (on: Queryable) => {
  const event = { source: 'stripe', id: `evt_${randomUUID()}`, type: 'checkout.session.completed', raw: Buffer.from('{}') };
  expect(await storeStripeEvent(on, event)).toMatchObject({ stored: true });
  return { source: event.source, eventId: event.id };
};
const synchronousCommit = async (on: Queryable) => (await on.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
const startedOf = async (keys: { eventId: string }[]) =>
  (
    await db.query<{ started: boolean }>('SELECT started_at IS NOT NULL AS started FROM event_bodies WHERE event_id = ANY($1)', [
      keys.map((key) => key.eventId),
    ])
  ).rows;

it("commits a body with the WAL's flush, and the mark of its start without it, one row or a sweeper's batch", async () => {
  const one = await db.transaction(async (tx) => {
    const key = await stored(tx);
    expect(await synchronousCommit(tx)).toBe('on');
    await markStarted(tx, [key]);
    expect(await synchronousCommit(tx)).toBe('off');
    return key;
  });
  const batch = await db.transaction(async (tx) => {
    const keys = [await stored(tx), await stored(tx)];
    expect(await synchronousCommit(tx)).toBe('on');
    await markStarted(tx, keys);
    expect(await synchronousCommit(tx)).toBe('off');
    return keys;
  });
  expect(await startedOf([one, ...batch])).toEqual([{ started: true }, { started: true }, { started: true }]);
});

it("leaves its connection's setting as it was: the next body on that connection commits with the flush", async () => {
  const connection = new pg.Client({ connectionString: db.url });
  await connection.connect();
  try {
    const on: Queryable = { query: (sql, params) => connection.query(typeof sql === 'string' ? sql : { name: sql.name, text: sql.text }, params) };
    await markStarted(on, [await stored(on)]);
    await markStarted(on, [await stored(on), await stored(on)]);
    expect(await synchronousCommit(on)).toBe('on');
  } finally {
    await connection.end();
  }
});
