import { randomUUID } from 'node:crypto';
import { ProviderKind, type WebhookEvent } from '../../contracts';
import { Router } from '../../src/flows';
import { startOptions } from '../../src/intake/start-data';
import { CATALOG_SECRETS, SECRETS, shopifyHeaders, standardHeaders, stripeEvent, stripeHeaders } from './signing';

export interface SignedDelivery {
  id: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A signed Stripe `checkout.session.completed` for one order, of a connected account (the flow's tenant) when given. */
export function checkoutCompleted(options: { orderId?: string; email?: string; paymentIntent?: string; account?: string } = {}): SignedDelivery {
  const orderId = options.orderId ?? `ord_${randomUUID()}`;
  const event = stripeEvent({
    type: 'checkout.session.completed',
    ...(options.account && { account: options.account }),
    data: {
      object: {
        id: `cs_test_${randomUUID()}`,
        object: 'checkout.session',
        amount_total: 4200,
        currency: 'eur',
        payment_intent: options.paymentIntent ?? `pi_${randomUUID().replace(/-/g, '')}`,
        customer_details: { email: options.email ?? 'ada@example.com' },
        metadata: { order_id: orderId },
      },
    },
  });
  const body = JSON.stringify(event);
  return { id: event.id as string, path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
}

/** A signed Standard Webhooks `order.created`. */
export function orderCreated(
  options: { amount?: number; paymentMethod?: string; orderId?: string; email?: string; name?: string } = {},
): SignedDelivery & { orderId: string } {
  const id = `msg_${randomUUID()}`;
  const orderId = options.orderId ?? `ord_${randomUUID()}`;
  const body = JSON.stringify({
    type: 'order.created',
    timestamp: new Date().toISOString(),
    data: {
      orderId,
      amount: options.amount ?? 4200,
      currency: 'eur',
      customer: 'cus_test_1',
      paymentMethod: options.paymentMethod ?? 'pm_card_visa',
      email: options.email ?? 'grace@example.com',
      ...(options.name !== undefined && { name: options.name }),
    },
  });
  return { id, orderId, path: 'standard', body, headers: standardHeaders(body, SECRETS.standard, { id }) };
}

/**
 * A signed Shopify `orders/paid` (the shape of Shopify's documented example), for a stack whose
 * Shopify secret is `CATALOG_SECRETS.shopify`. `webhookId` tells one subscription's copy from another's.
 */
export function shopifyOrderPaid(
  options: { orderId?: number; email?: string; webhookId?: string; eventId?: string; topic?: string; financialStatus?: string; updatedAt?: string } = {},
): SignedDelivery & { orderId: number } {
  const id = options.eventId ?? randomUUID();
  const orderId = options.orderId ?? Math.floor(Math.random() * 1e12);
  const body = JSON.stringify({
    id: orderId,
    admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
    name: `#${orderId}`,
    email: options.email ?? 'ada@example.com',
    currency: 'EUR',
    financial_status: options.financialStatus ?? 'paid',
    updated_at: options.updatedAt ?? '2026-12-01T10:00:00-05:00',
    total_price: '42.00',
    line_items: [{ id: 866550311766439, title: 'Durable mug', quantity: 1, price: '42.00' }],
  });
  const headers = shopifyHeaders(body, CATALOG_SECRETS.shopify, {
    eventId: id,
    ...(options.webhookId && { webhookId: options.webhookId }),
    ...(options.topic && { topic: options.topic }),
  });
  return { id, orderId, path: 'shopify', body, headers };
}

/** A signed Stripe `customer.subscription.<action>` with its own `created`. */
export function subscriptionEvent(subscriptionId: string, action: 'created' | 'updated' | 'deleted', created: number, status: string): SignedDelivery {
  const event = stripeEvent({
    type: `customer.subscription.${action}`,
    created,
    data: { object: { id: subscriptionId, object: 'subscription', customer: 'cus_test_1', status } },
  });
  const body = JSON.stringify(event);
  return { id: event.id as string, path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
}

/** A signed Stripe `customer.updated` with its own `created` and balance. */
export function customerUpdated(customerId: string, created: number, balance: number): SignedDelivery {
  const event = stripeEvent({
    type: 'customer.updated',
    created,
    data: { object: { id: customerId, object: 'customer', balance, currency: 'eur', delinquent: balance > 0 } },
  });
  const body = JSON.stringify(event);
  return { id: event.id as string, path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
}

/**
 * A signed thin event notification about a customer, as a Stripe event destination with thin
 * payloads sends it (https://docs.stripe.com/event-destinations#thin-events): no state, a reference.
 */
export function customerThin(customerId: string, type = 'v1.customer.updated', created = new Date()): SignedDelivery {
  const id = `evt_test_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({
    id,
    object: 'v2.core.event',
    type,
    created: created.toISOString(),
    livemode: false,
    context: null,
    related_object: { id: customerId, type: 'customer', url: `/v1/customers/${customerId}` },
    reason: null,
  });
  return { id, path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
}

/**
 * An `order.created` as the receiver starts `chargeOrder` with it (`startOptions`: the routing
 * fields, no body), for tests that start the workflow themselves.
 */
export function orderCreatedEvent(id: string, data: { orderId: string; amount: number; paymentMethod?: string }): WebhookEvent {
  const payload = { type: 'order.created', data: { currency: 'eur', customer: 'cus_1', paymentMethod: 'pm_card_visa', email: 'grace@example.com', ...data } };
  const at = '2026-12-01T10:00:00.000Z';
  const { options } = startOptions(
    { source: 'standard', provider: ProviderKind.STANDARD_WEBHOOKS, id, type: 'order.created', occurredAt: at, receivedAt: at, payload },
    { workflowIdPrefix: '', router: new Router(ProviderKind.STANDARD_WEBHOOKS) },
    'delivery',
    'unused',
  );
  return options.args[0];
}
