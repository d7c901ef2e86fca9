import { patched } from '@temporalio/workflow';
import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { alreadyFulfilled, fulfilOrder } from './fulfil-order';
import { fieldsOf, finish, handleEvent } from './event-frame';

export const fulfilShopifyOrderFlow = defineFlow({
  workflow: fulfilShopifyOrder,
  description: 'Records a paid Shopify order and emails the customer (Shopify took the payment), once per order, whichever topic says it is paid.',
  // Shopify's topic is an unsigned header, and the same signed order can come under each of these:
  // the signed body's financial_status decides.
  handles: { shopify: ['orders/create', 'orders/updated', 'orders/paid'] },
  decidesFromBody: true,
  // Shopify sends an order's topics within a second, in any order: one at a time per order, the
  // newest state first, and an older one than the state already applied is superseded.
  key: { key: '/id', version: ['/updated_at'], order: 'latest' },
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Ends in seconds, unless the email API is down and its retries (up to 23 hours) outlast the build that started it.',
  },
  fields: {
    copy: { orderId: '/id', orderName: '/name', amount: '/total_price', currency: '/currency', financialStatus: '/financial_status' },
    personal: { email: '/email' },
  },
  summary: ({ amount, currency }) => (typeof amount === 'string' && typeof currency === 'string' ? `${amount} ${currency.toUpperCase()}` : undefined),
});

/** The customer's address, read from the stored body by the activities that use it. */
const customerEmail = fulfilShopifyOrderFlow.bodyField('email');

/**
 * A Shopify order's `orders/create`, `orders/updated` or `orders/paid`, in its order's turn (newest
 * `updated_at` first; an older state is superseded): when its signed body says it is paid, the fulfilment a Stripe checkout runs (record the order, email the customer), once per
 * order whichever of its events comes first; otherwise nothing. Shopify took the payment, so no
 * Stripe call is made.
 */
export async function fulfilShopifyOrder(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(
    event,
    async (progress) => {
      const shopifyOrder = fieldsOf(event, fulfilShopifyOrderFlow);
      // Before the body decided, this flow ran for orders/paid only and fulfilled every one.
      const paid = patched(PAID_FROM_BODY) ? shopifyOrder.financialStatus === 'paid' : true;
      if (!paid) return finish(event, progress, 'not-paid', { status: 'completed', detail: { financialStatus: shopifyOrder.financialStatus ?? null } });
      const id = shopifyOrder.orderId;
      const currency = typeof shopifyOrder.currency === 'string' ? shopifyOrder.currency.toLowerCase() : null;
      const order = await fulfilOrder(event, progress, {
        order: {
          id: `shopify-${typeof id === 'number' || typeof id === 'string' ? id : event.id}`,
          status: 'fulfilled',
          amount: minorUnits(shopifyOrder.amount),
          currency,
          paymentIntentId: null,
          checkoutSessionId: null,
        },
        customerEmail: shopifyOrder.email === true ? customerEmail : null,
        label: typeof shopifyOrder.orderName === 'string' ? shopifyOrder.orderName : undefined,
      });
      if (alreadyFulfilled(event, order))
        return finish(event, progress, 'already-fulfilled', { status: 'completed', detail: { orderId: order.id, fulfilledBy: order.fulfilledBy } });
      return finish(event, progress, 'fulfilled', { status: 'completed', detail: { orderId: order.id } });
    },
    fulfilShopifyOrderFlow,
  );
}

const PAID_FROM_BODY = 'shopify-paid-from-body';

/**
 * Shopify's prices are decimal text in the currency's own precision (`"42.00"` EUR, `"4200"` JPY):
 * the digits without the point are the amount in minor units, exactly, with no floating point.
 */
function minorUnits(price: unknown): number | null {
  if (typeof price !== 'string' || !/^\d{1,12}(\.\d{1,3})?$/.test(price)) return null;
  return Number(price.replace('.', ''));
}
