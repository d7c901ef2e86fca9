import { randomUUID } from 'node:crypto';
import { openDatabase, type Database, type Queryable } from '../../src/db/database';
import { loadBody } from '../../src/db/event-bodies';
import { claimKey, releaseKey } from '../../src/db/entities';
import { markStarted } from '../../src/db/inbox';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { storeStripeEvent } from '../support/stored-events';

/**
 * What every delivery and every event's workflow run against PostgreSQL is prepared once per
 * connection (src/db/database.ts), unless DATABASE_URL says prepare=false: PostgreSQL planned each
 * of them anew for every call (docs/benchmarks.md).
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
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

const preparedWhileRunning = (database: Database) =>
  database.transaction(async (tx) => {
    await deliverAndRun(tx);
    const { rows } = await tx.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    return rows.map((row) => row.name);
  });

it("prepares a delivery's and its event's statements on their connection", async () => {
  expect(await preparedWhileRunning(db)).toEqual(['claim-event', 'claim-key', 'complete-event', 'load-body', 'mark-started', 'release-key', 'store-body']);
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

it('keeps one plan of each after its first five calls', async () => {
  // PostgreSQL plans a prepared statement's first five calls for their values, then keeps one
  // generic plan if it costs no more than theirs did.
  const fresh = await openDatabase({ url: db.url });
  try {
    const plans = await fresh.transaction(async (tx) => {
      for (let call = 0; call < 8; call++) await deliverAndRun(tx);
      const { rows } = await tx.query<{ name: string; generic_plans: number; custom_plans: number }>(
        'SELECT name, generic_plans::int, custom_plans::int FROM pg_prepared_statements ORDER BY name',
      );
      return rows;
    });
    expect(plans).toHaveLength(7);
    for (const plan of plans) expect(plan).toEqual({ name: plan.name, custom_plans: 5, generic_plans: 3 });
  } finally {
    await fresh.close();
  }
});
