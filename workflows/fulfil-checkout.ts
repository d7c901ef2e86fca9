import { bodyField, WorkflowType, type EventOutcome, type WebhookEvent } from '../contracts';
import { db, external, fieldsOf, finish, formatAmount, handleEvent, idempotencyKey, sendEmail, stepOf } from './steps';

/** The customer's address: read from the stored body by the activities that use it, never in this workflow's history. */
const customerEmail = bodyField(WorkflowType.fulfilCheckout, 'email');

/**
 * Stripe `checkout.session.completed`: record the order, mark the PaymentIntent fulfilled in
 * Stripe, email the customer. Each step is keyed by the event ID, so no copy of the event, retry
 * or reset does any of it twice.
 */
export async function fulfilCheckout(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const session = fieldsOf(event);
    const text = (field: string) => (typeof session[field] === 'string' ? (session[field] as string) : null);
    const amount = typeof session.amount === 'number' ? session.amount : null;
    const order = await db.saveOrder({
      ...stepOf(event, 'order:fulfilled'),
      order: {
        id: text('orderId') ?? text('sessionId')!,
        status: 'fulfilled',
        customerEmail: session.email === true ? customerEmail : null,
        amount,
        currency: text('currency'),
        paymentIntentId: text('paymentIntent'),
        checkoutSessionId: text('sessionId'),
      },
    });
    progress.done('order');

    if (order.paymentIntentId) {
      await external.markPaymentIntentFulfilled.executeWithOptions({ summary: `mark ${order.paymentIntentId} fulfilled` }, [
        { source: event.source, eventId: event.id, idempotencyKey: idempotencyKey(), paymentIntentId: order.paymentIntentId, orderId: order.id },
      ]);
      progress.done('stripe:mark-fulfilled');
    }

    if (session.email === true) {
      await sendEmail({
        ...stepOf(event, 'email:confirmation'),
        idempotencyKey: idempotencyKey(),
        to: customerEmail,
        subject: `Order ${order.id} confirmed`,
        text: `Thank you for your order ${order.id}${order.amount !== null && order.currency ? ` of ${formatAmount(order.amount, order.currency)}` : ''}. It is on its way.`,
      });
      progress.done('email:confirmation');
    }

    return finish(event, progress, 'fulfilled', { status: 'completed', detail: { orderId: order.id } });
  });
}
