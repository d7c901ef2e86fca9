import { ledgerEventId, type BodyField, type SavedOrder, type WebhookEvent } from '../contracts';
import { dbActivity, externalActivity, sendEmail } from './activities';
import { idempotencyKey, stepOf } from './event-frame';
import { formatAmount } from './format';
import type { Progress } from './progress';

/**
 * The fulfilment of a paid order, whichever provider took the payment: record the order, mark its
 * Stripe PaymentIntent fulfilled when it has one, and email the customer when there is an address.
 * An order another event fulfilled first (two Shopify topics about one paid order) is recorded and
 * nothing else: `alreadyFulfilled` (`fulfilledBy` names that event).
 */
export async function fulfilOrder(
  event: WebhookEvent,
  progress: Progress,
  { order: fields, customerEmail: to, label }: { order: SavedOrder; customerEmail: BodyField | null; label?: string },
) {
  const order = await dbActivity.saveOrder({ ...stepOf(event, 'order:fulfilled'), order: { ...fields, customerEmail: to } });
  progress.done('order');
  if (alreadyFulfilled(event, order)) return order;

  if (order.paymentIntentId) {
    await externalActivity.markPaymentIntentFulfilled.executeWithOptions({ summary: `mark ${order.paymentIntentId} fulfilled` }, [
      { source: event.source, eventId: ledgerEventId(event), idempotencyKey: idempotencyKey(), paymentIntentId: order.paymentIntentId, orderId: order.id },
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

/** True when another event (or another flow of this one) fulfilled the order first (an order saved before this was recorded has no `fulfilledBy`). */
export function alreadyFulfilled(event: WebhookEvent, order: SavedOrder): boolean {
  return order.fulfilledBy !== undefined && order.fulfilledBy !== ledgerEventId(event);
}
