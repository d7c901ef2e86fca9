import fc from 'fast-check';
import { isNewerUpdate, type SubscriptionUpdate } from '../../contracts';
import { storeIfNewer } from '../../src/db/subscriptions';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The entity workflow (isNewerUpdate) and the database (storeIfNewer) must order two events of one
 * second the same way, or an update the workflow applies is refused by the table, or the reverse.
 * The database here has an English ICU collation, which orders text unlike bytes ("a" < "B").
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase({ icuLocale: 'en-US' });
});
afterAll(async () => {
  await db?.drop();
});

const update = (subscriptionId: string, eventId: string, created: number): SubscriptionUpdate => ({
  eventId,
  created,
  deleted: false,
  subscription: { id: subscriptionId, object: 'subscription', customer: 'cus_1', status: 'active' },
});

it('the database collation orders event IDs unlike bytes, so the check is meaningful', async () => {
  const { rows } = await db.query<{ before: boolean }>(`SELECT 'evt_a' < 'evt_B' AS before`);
  expect(rows).toEqual([{ before: true }]);
  expect(isNewerUpdate({ created: 1, eventId: 'evt_a' }, { created: 1, eventId: 'evt_B' })).toBe(true);
});

it('stores the second of two same-second events exactly when the workflow would apply it', async () => {
  const eventId = fc.stringMatching(/^[\x21-\x7e]{1,12}$/);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(eventId, eventId, async (first, second) => {
      const subscriptionId = `sub_order_${run++}`;
      expect(await storeIfNewer(db, update(subscriptionId, first, 1_764_000_000), {})).toBe(true);
      expect(await storeIfNewer(db, update(subscriptionId, second, 1_764_000_000), {})).toBe(
        isNewerUpdate({ created: 1_764_000_000, eventId: second }, { created: 1_764_000_000, eventId: first }),
      );
    }),
    { numRuns: 300 },
  );
});
