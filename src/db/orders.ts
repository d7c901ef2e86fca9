import type { Order, RefundInput } from '../../contracts';
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

/** Records a refund against its order; the same refund event twice records it once. */
export async function insertRefund(db: Queryable, refund: RefundInput): Promise<void> {
  await db.query(
    `INSERT INTO order_refunds (order_id, refund_event_id, source, charge_id, amount_refunded, currency, recorded_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (order_id, refund_event_id) DO NOTHING`,
    [refund.orderId, refund.refundEventId, refund.source, refund.chargeId, refund.amountRefunded, refund.currency, refund.eventId],
  );
}
