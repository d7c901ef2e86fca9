import type { Database } from '../src/db/database';
import { writeOnce } from '../src/db/ledger';

export interface Order {
  id: string;
  status: 'received' | 'awaiting_review' | 'paid' | 'payment_failed' | 'cancelled' | 'fulfilled';
  customerEmail: string | null;
  amount: number | null;
  currency: string | null;
  paymentIntentId?: string | null;
  checkoutSessionId?: string | null;
}

export function createOrderActivities({ db }: { db: Database }) {
  return {
    /**
     * Writes the order row and the step's ledger row in one transaction; the same step of the same
     * event never writes twice, it returns what the first attempt stored.
     */
    async saveOrder(input: { source: string; eventId: string; step: string; order: Order }): Promise<Order> {
      const { source, eventId, step, order } = input;
      const { result } = await writeOnce<Order>(db, { source, eventId, step }, async (tx) => {
        await tx.query(
          `INSERT INTO orders (id, source, event_id, status, customer_email, amount, currency, payment_intent_id, checkout_session_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,
             payment_intent_id = COALESCE(EXCLUDED.payment_intent_id, orders.payment_intent_id), updated_at = now()`,
          [order.id, source, eventId, order.status, order.customerEmail, order.amount, order.currency, order.paymentIntentId ?? null, order.checkoutSessionId ?? null],
        );
        return { externalId: order.id, result: order };
      });
      return result;
    },
  };
}
