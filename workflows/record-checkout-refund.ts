import { defineFlow, ledgerEventId, type EventOutcome, type WebhookEvent } from '../contracts';
import { dbActivity } from './activities';
import { fieldsOf, finish, handleEvent } from './event-frame';
import { waitForEvent } from './waits';

export const recordCheckoutRefundFlow = defineFlow({
  workflow: recordCheckoutRefund,
  description: "Waits up to 30 days for the checkout's refund (Stripe charge.refunded of its PaymentIntent) and records it against the order.",
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Waits up to 30 days, longer than a build runs: it moves to each new build, and every change to it replays its recorded history.',
  },
  fields: {
    copy: {
      sessionId: '/data/object/id',
      orderId: '/data/object/metadata/order_id',
      paymentIntent: '/data/object/payment_intent',
    },
  },
  tenant: '/account',
  waits: {
    refund: {
      type: 'charge.refunded',
      match: 'body.data.object.payment_intent == waiting.paymentIntent && body.data.object.amount_refunded > 0',
      fields: { chargeId: '/data/object/id', amountRefunded: '/data/object/amount_refunded', currency: '/data/object/currency' },
      timeout: '30 days',
    },
  },
});

/**
 * Stripe `checkout.session.completed`, beside `fulfilCheckout` (a route's second subscriber): waits
 * for the refund of the session's PaymentIntent, which may have come before this run began, and
 * records it against the order once. No refund in 30 days ends `not-refunded`.
 */
export async function recordCheckoutRefund(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const session = fieldsOf(event, recordCheckoutRefundFlow);
    const text = (field: string) => (typeof session[field] === 'string' ? (session[field] as string) : null);
    const orderId = text('orderId') ?? text('sessionId');
    const paymentIntent = text('paymentIntent');
    if (orderId === null || paymentIntent === null) return finish(event, progress, 'no-payment', { status: 'completed', detail: { orderId } });
    const refund = await waitForEvent(event, progress, recordCheckoutRefundFlow.wait('refund'), { paymentIntent });
    if (!refund) return finish(event, progress, 'not-refunded', { status: 'completed', detail: { orderId } });
    const { chargeId, amountRefunded, currency } = refund.fields;
    await dbActivity.recordRefund({
      source: event.source,
      eventId: ledgerEventId(event),
      step: 'refund',
      orderId,
      refundEventId: refund.eventId,
      chargeId: typeof chargeId === 'string' ? chargeId : null,
      amountRefunded: typeof amountRefunded === 'number' ? amountRefunded : null,
      currency: typeof currency === 'string' ? currency : null,
    });
    progress.done('refund');
    return finish(event, progress, 'refunded', { status: 'completed', detail: { orderId, refundEventId: refund.eventId, amountRefunded } });
  });
}
