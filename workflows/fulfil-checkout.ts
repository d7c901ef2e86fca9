import { bodyField, WorkflowType, type BodyField, type EventOutcome, type SavedOrder, type WebhookEvent } from '../contracts';
import { db, external, fieldsOf, finish, formatAmount, handleEvent, idempotencyKey, sendEmail, stepOf, type Progress } from './steps';

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
    const order = await fulfilOrder(event, progress, {
      order: {
        id: text('orderId') ?? text('sessionId')!,
        status: 'fulfilled',
        amount: typeof session.amount === 'number' ? session.amount : null,
        currency: text('currency'),
        paymentIntentId: text('paymentIntent'),
        checkoutSessionId: text('sessionId'),
      },
      customerEmail: session.email === true ? customerEmail : null,
    });
    return finish(event, progress, 'fulfilled', { status: 'completed', detail: { orderId: order.id } });
  });
}

/**
 * The fulfilment of a paid order, whichever provider took the payment: record the order, mark its
 * Stripe PaymentIntent fulfilled when it has one, and email the customer when there is an address.
 */
export async function fulfilOrder(event: WebhookEvent, progress: Progress, { order: fields, customerEmail: to, label }: { order: SavedOrder; customerEmail: BodyField | null; label?: string }) {
  const order = await db.saveOrder({ ...stepOf(event, 'order:fulfilled'), order: { ...fields, customerEmail: to } });
  progress.done('order');

  if (order.paymentIntentId) {
    await external.markPaymentIntentFulfilled.executeWithOptions({ summary: `mark ${order.paymentIntentId} fulfilled` }, [
      { source: event.source, eventId: event.id, idempotencyKey: idempotencyKey(), paymentIntentId: order.paymentIntentId, orderId: order.id },
    ]);
    progress.done('stripe:mark-fulfilled');
  }

  if (to) {
    const name = label ?? order.id;
    await sendEmail({
      ...stepOf(event, 'email:confirmation'),
      idempotencyKey: idempotencyKey(),
      to,
      subject: `Order ${name} confirmed`,
      text: `Thank you for your order ${name}${order.amount !== null && order.currency ? ` of ${formatAmount(order.amount, order.currency)}` : ''}. It is on its way.`,
    });
    progress.done('email:confirmation');
  }
  return order;
}
