import type { Order } from '../../contracts';
import type { Queryable } from './database';

/**
 * Inserts the order, or moves it to the new status; a payment intent once set is kept, and so is the
 * event that first fulfilled it, which it returns for a fulfilled order (`SavedOrder.fulfilledBy`).
 */
export async function upsertOrder(db: Queryable, source: string, eventId: string, order: Order): Promise<{ fulfilledBy: string | null }> {
  const { rows } = await db.query<{ fulfilled_by: string | null }>(
    `INSERT INTO orders (id, source, event_id, status, customer_email, amount, currency, payment_intent_id, checkout_session_id, fulfilled_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $4 = 'fulfilled' THEN $3 END)
     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,
       payment_intent_id = COALESCE(EXCLUDED.payment_intent_id, orders.payment_intent_id),
       fulfilled_by = COALESCE(orders.fulfilled_by, EXCLUDED.fulfilled_by), updated_at = now()
     RETURNING fulfilled_by`,
    [
      order.id,
      source,
      eventId,
      order.status,
      order.customerEmail,
      order.amount,
      order.currency,
      order.paymentIntentId ?? null,
      order.checkoutSessionId ?? null,
    ],
  );
  return { fulfilledBy: rows[0]!.fulfilled_by };
}
