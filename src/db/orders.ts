import type { Order } from '../../contracts';
import type { Queryable } from './database';

/** Inserts the order, or moves it to the new status; a payment intent once set is kept. */
export async function upsertOrder(db: Queryable, source: string, eventId: string, order: Order): Promise<void> {
  await db.query(
    `INSERT INTO orders (id, source, event_id, status, customer_email, amount, currency, payment_intent_id, checkout_session_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,
       payment_intent_id = COALESCE(EXCLUDED.payment_intent_id, orders.payment_intent_id), updated_at = now()`,
    [order.id, source, eventId, order.status, order.customerEmail, order.amount, order.currency, order.paymentIntentId ?? null, order.checkoutSessionId ?? null],
  );
}
