import type { CustomerUpdate } from '../../contracts';
import type { Queryable } from './database';

/**
 * Stores the customer's state if this update is newer than the stored one (created, then event ID in
 * byte order, as the key's versions compare), so an older event never overwrites a newer one, even
 * across entity runs and redeliveries. False when it was not newer.
 */
export async function storeCustomerIfNewer(db: Queryable, update: CustomerUpdate): Promise<boolean> {
  const { customer } = update;
  const { rows } = await db.query(
    `INSERT INTO customers (id, balance, currency, delinquent, deleted, last_event_id, last_event_created, last_event_source)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, currency = EXCLUDED.currency, delinquent = EXCLUDED.delinquent,
       deleted = EXCLUDED.deleted, last_event_id = EXCLUDED.last_event_id, last_event_created = EXCLUDED.last_event_created,
       last_event_source = EXCLUDED.last_event_source, updated_at = now()
     WHERE (customers.last_event_created, customers.last_event_id COLLATE "C") < (EXCLUDED.last_event_created, EXCLUDED.last_event_id COLLATE "C")
     RETURNING id`,
    [customer.id, customer.balance, customer.currency, customer.delinquent, update.deleted, update.eventId, update.created, update.source],
  );
  return rows.length > 0;
}
