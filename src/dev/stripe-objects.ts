import type { StoredResponse } from './idempotency-store';

// Stripe's objects and answers as the stand-in (./stripe-stand-in.ts) makes them.

export interface PaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  customer: string | null;
  payment_method: string | null;
  status: string;
  metadata: Record<string, string>;
}

/** An event object as the Events API returns it. */
export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
  [field: string]: unknown;
}

/** Stripe's test payment method that is always declined. */
export const DECLINED_PAYMENT_METHOD = 'pm_card_chargeDeclined';

/** Stripe's test payment methods (`pm_card_visa`, `pm_card_mastercard`, …); any other is unknown here. */
export const KNOWN_PAYMENT_METHOD = /^pm_card_\w+$/;

/** Stripe's answer to a payment method it does not have: a request error, stored under no key. */
export function noSuchPaymentMethod(id: string): StoredResponse {
  return {
    status: 400,
    body: { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'payment_method', message: `No such PaymentMethod: '${id}'` } },
  };
}

/** Stripe's answer to a declined card: 402, the PaymentIntent left waiting for another payment method. */
export function decline(intent: PaymentIntent): StoredResponse {
  intent.status = 'requires_payment_method';
  return {
    status: 402,
    body: {
      error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.', payment_intent: { ...intent } },
    },
  };
}

export function createdByCheckout(id: string): PaymentIntent {
  return { id, object: 'payment_intent', amount: 0, currency: 'eur', customer: null, payment_method: null, status: 'succeeded', metadata: {} };
}

/** Stripe's form encoding: `a=1&metadata[order_id]=x` → `{ a: '1', metadata: { order_id: 'x' } }`. */
export function parseForm(body: string): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const nested = /^([^[]+)\[([^\]]+)\]$/.exec(name);
    if (nested) {
      const parent = (params[nested[1]!] ??= {}) as Record<string, string>;
      parent[nested[2]!] = value;
    } else {
      params[name] = value;
    }
  }
  return params;
}
