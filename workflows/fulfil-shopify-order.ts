import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { fulfilOrder } from './fulfil-order';
import { fieldsOf, finish, handleEvent } from './event-frame';

export const fulfilShopifyOrderFlow = defineFlow({
  workflow: fulfilShopifyOrder,
  description: 'Records a paid Shopify order and emails the customer (Shopify took the payment).',
  handles: { shopify: ['orders/paid'] },
  versioning: { behavior: 'AUTO_UPGRADE', why: 'Ends in seconds, unless the email API is down and its retries (up to 23 hours) outlast the build that started it.' },
  fields: { copy: { orderId: '/id', orderName: '/name', amount: '/total_price', currency: '/currency' }, personal: { email: '/email' } },
  summary: ({ amount, currency }) => (typeof amount === 'string' && typeof currency === 'string' ? `${amount} ${currency.toUpperCase()}` : undefined),
});

/** The customer's address, read from the stored body by the activities that use it. */
const customerEmail = fulfilShopifyOrderFlow.bodyField('email');

/**
 * Shopify `orders/paid`: the fulfilment a Stripe checkout runs (record the order, email the
 * customer), keyed by the Shopify event ID. Shopify took the payment, so no Stripe call is made.
 */
export async function fulfilShopifyOrder(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const shopifyOrder = fieldsOf(event, fulfilShopifyOrderFlow);
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
    return finish(event, progress, 'fulfilled', { status: 'completed', detail: { orderId: order.id } });
  });
}

/**
 * Shopify's prices are decimal text in the currency's own precision (`"42.00"` EUR, `"4200"` JPY):
 * the digits without the point are the amount in minor units, exactly, with no floating point.
 */
function minorUnits(price: unknown): number | null {
  if (typeof price !== 'string' || !/^\d{1,12}(\.\d{1,3})?$/.test(price)) return null;
  return Number(price.replace('.', ''));
}
