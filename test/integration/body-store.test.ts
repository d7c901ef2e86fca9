import { randomUUID } from 'node:crypto';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { storeStripeEvent } from '../support/stored-events';

/**
 * The body store's one round trip (`storeBody`, src/db/event-bodies.ts) on a real PostgreSQL, where
 * two copies of one event are stored at the same moment.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.drop());

const copy = () => ({ source: 'stripe', id: `evt_${randomUUID()}`, type: 'checkout.session.completed', raw: Buffer.from('{}') });

it("a copy whose insert waited for another copy's commit answers with what that copy stored: started, not waiting", async () => {
  const event = copy();
  let stored!: () => void;
  const storedFirst = new Promise<void>((resolve) => (stored = resolve));
  let commit!: () => void;
  const committing = new Promise<void>((resolve) => (commit = resolve));
  // The first copy stored and started, in a transaction still open.
  const first = db.transaction(async (tx) => {
    await storeStripeEvent(tx, event);
    await tx.query('UPDATE event_bodies SET started_at = now() WHERE event_id = $1', [event.id]);
    stored();
    await committing;
  });
  await storedFirst;
  // The second began before that commit: its statement cannot see the first's row, only wait on it.
  const second = storeStripeEvent(db, event);
  await eventually('the second copy waits for the first', async () => {
    const { rows } = await db.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
    return rows.length === 1;
  });
  commit();
  await first;

  expect(await second).toEqual({ stored: false, startedAt: expect.any(Date), waiting: false });
  const { rows } = await db.query('SELECT count(*)::int AS count FROM event_bodies WHERE event_id = $1', [event.id]);
  expect(rows).toEqual([{ count: 1 }]);
});

it('a copy stored before answers what that copy stored', async () => {
  const event = copy();
  expect(await storeStripeEvent(db, event)).toEqual({ stored: true, heldBy: null, pacedBy: null });
  expect(await storeStripeEvent(db, event)).toEqual({ stored: false, startedAt: null, waiting: false });
});
