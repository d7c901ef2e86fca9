import type { EventOutcome, WebhookEvent } from '../contracts';
import { db, external, finish, formatAmount, handleEvent, idempotencyKey, sendEmail, stepOf } from './steps';

interface CheckoutSession {
  id: string;
  amount_total?: number | null;
  currency?: string | null;
  payment_intent?: string | null;
  customer_details?: { email?: string | null } | null;
  metadata?: Record<string, string> | null;
}

/**
 * Stripe `checkout.session.completed`: record the order, mark the PaymentIntent fulfilled in
 * Stripe, email the customer. Each step is keyed by the event ID, so no copy of the event, retry
 * or reset does any of it twice.
 */
export async function fulfilCheckout(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const done = (step: string) => progress.stepsDone.push(step);

    const session = (event.payload as { data: { object: CheckoutSession } }).data.object;
    const order = await db.saveOrder({
      ...stepOf(event, 'order:fulfilled'),
      order: {
        id: session.metadata?.order_id ?? session.id,
        status: 'fulfilled',
        customerEmail: session.customer_details?.email ?? null,
        amount: session.amount_total ?? null,
        currency: session.currency ?? null,
        paymentIntentId: session.payment_intent ?? null,
        checkoutSessionId: session.id,
      },
    });
    done('order');

    if (session.payment_intent) {
      await external.markPaymentIntentFulfilled.executeWithOptions({ summary: `mark ${session.payment_intent} fulfilled` }, [
        { source: event.source, eventId: event.id, idempotencyKey: idempotencyKey(), paymentIntentId: session.payment_intent, orderId: order.id },
      ]);
      done('stripe:mark-fulfilled');
    }

    if (order.customerEmail) {
      await sendEmail({
        ...stepOf(event, 'email:confirmation'),
        idempotencyKey: idempotencyKey(),
        to: order.customerEmail,
        subject: `Order ${order.id} confirmed`,
        text: `Thank you for your order ${order.id}${order.amount !== null && order.currency ? ` of ${formatAmount(order.amount, order.currency)}` : ''}. It is on its way.`,
      });
      done('email:confirmation');
    }

    return finish(event, progress, 'fulfilled', { status: 'completed', detail: { orderId: order.id } });
  });
}
