import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { fulfilOrder } from './fulfil-order';
import { fieldsOf, finish, handleEvent } from './event-frame';
import { formatAmount } from './format';

export const fulfilCheckoutFlow = defineFlow({
  workflow: fulfilCheckout,
  description: 'Records the order, marks the PaymentIntent fulfilled in Stripe and emails the customer.',
  handles: { stripe: ['checkout.session.completed'] },
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Ends in seconds, unless Stripe or the email API is down: its activities retry for up to 23 hours, longer than a rolling deploy keeps the old build.',
  },
  fields: {
    copy: {
      sessionId: '/data/object/id',
      orderId: '/data/object/metadata/order_id',
      amount: '/data/object/amount_total',
      currency: '/data/object/currency',
      paymentIntent: '/data/object/payment_intent',
    },
    personal: { email: '/data/object/customer_details/email' },
  },
  // The connected account of a Stripe Connect platform's event (absent for the platform's own).
  tenant: '/account',
  summary: ({ amount, currency }) => (typeof amount === 'number' && typeof currency === 'string' ? formatAmount(amount, currency) : undefined),
});

/** The customer's address: read from the stored body by the activities that use it, never in this workflow's history. */
const customerEmail = fulfilCheckoutFlow.bodyField('email');

/**
 * Stripe `checkout.session.completed`: record the order, mark the PaymentIntent fulfilled in
 * Stripe, email the customer. Each step is keyed by the event ID, so no copy of the event, retry
 * or reset does any of it twice.
 */
export async function fulfilCheckout(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const session = fieldsOf(event, fulfilCheckoutFlow);
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
