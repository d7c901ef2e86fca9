import type { SubscriptionUpdate } from '../../contracts';
import type { Queryable } from './database';

/**
 * Stores the subscription's state if this update is newer than the stored one (created, then event
 * ID in byte order: `COLLATE "C"`, whatever the database's collation, as `isNewerUpdate` compares),
 * so the order holds across entity runs and redeliveries. `data` is the subscription object. False
 * when it was not newer.
 */
export async function storeIfNewer(db: Queryable, update: SubscriptionUpdate, data: unknown): Promise<boolean> {
  const { subscription } = update;
  const { rows } = await db.query(
    `INSERT INTO subscriptions (id, customer, status, data, last_event_id, last_event_created, last_event_source)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET customer = EXCLUDED.customer, status = EXCLUDED.status, data = EXCLUDED.data,
       last_event_id = EXCLUDED.last_event_id, last_event_created = EXCLUDED.last_event_created,
       last_event_source = EXCLUDED.last_event_source, updated_at = now()
     WHERE (subscriptions.last_event_created, subscriptions.last_event_id COLLATE "C") < (EXCLUDED.last_event_created, EXCLUDED.last_event_id COLLATE "C")
     RETURNING id`,
    [
      subscription.id,
      subscription.customer ?? null,
      update.deleted ? 'deleted' : subscription.status,
      JSON.stringify(data),
      update.eventId,
      update.created,
      update.source ?? null,
    ],
  );
  return rows.length > 0;
}
