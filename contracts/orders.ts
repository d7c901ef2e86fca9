import { defineSignal } from '@temporalio/workflow';
import type { BodyField, BodyStep, StepKey } from './events';
import type { Checked } from './flows';

/** An operator's decision on a held order. */
export const approveSignal = defineSignal<[{ by?: string }?]>('approve');
export const rejectSignal = defineSignal<[{ by?: string; reason?: string }?]>('reject');

/**
 * Charge a declined order again, with the customer's new payment method or the one it had. The
 * workflow takes it only while it waits for one; `attempt` is the charge attempt it asks for, which
 * operators' tools copy from the workflow's `status` (`EventProgress.awaiting`), so that a reset's
 * re-applied copy answers the same decline.
 */
export const retryPaymentSignal = defineSignal<[RetryPayment?]>('retryPayment');

export interface RetryPayment {
  /** A Stripe payment method ID (`pm_…`); the order's own when not given. */
  paymentMethod?: string;
  by?: string;
  attempt?: number;
}

/** Stripe object IDs: a prefix, an underscore and letters or digits (`pm_card_visa`, `card_1Nc…`). */
const STRIPE_ID = /^[a-z]+_[A-Za-z0-9_]{1,250}$/;

/**
 * The `retryPayment` argument as given, checked. Operators' tools refuse a bad one before sending
 * it; the workflow ignores one that got past them.
 */
export function readRetryPayment(data: unknown): Checked<RetryPayment> {
  const refuse = (error: string): Checked<RetryPayment> => ({ ok: false, error });
  if (data === undefined || data === null) return { ok: true, value: {} };
  if (typeof data !== 'object' || Array.isArray(data)) return refuse('the retryPayment argument must be a JSON object such as {"paymentMethod":"pm_…"}');
  const { paymentMethod, by, attempt, ...rest } = data as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return refuse(`retryPayment takes paymentMethod, by and attempt, not ${unknown.join(', ')}`);
  if (paymentMethod !== undefined && (typeof paymentMethod !== 'string' || !STRIPE_ID.test(paymentMethod)))
    return refuse('paymentMethod must be a Stripe payment method ID such as pm_card_visa');
  if (by !== undefined && typeof by !== 'string') return refuse('by must be a string');
  if (attempt !== undefined && !(Number.isSafeInteger(attempt) && (attempt as number) > 1)) return refuse('attempt must be a whole number above 1');
  return {
    ok: true,
    value: {
      ...(paymentMethod !== undefined && { paymentMethod: paymentMethod as string }),
      ...(by !== undefined && { by: by as string }),
      ...(attempt !== undefined && { attempt: attempt as number }),
    },
  };
}

export interface Order {
  id: string;
  status: 'received' | 'awaiting_review' | 'paid' | 'payment_failed' | 'cancelled' | 'fulfilled';
  customerEmail: string | null;
  amount: number | null;
  currency: string | null;
  paymentIntentId?: string | null;
  checkoutSessionId?: string | null;
}

/** The order row an event's step writes, once; the activity reads the customer's email from the body. */
export interface SaveOrderInput extends BodyStep {
  order: SavedOrder & { customerEmail: BodyField | null };
}

/** An order as a workflow sees it: the row without the customer's email, which stays out of Temporal. */
export type SavedOrder = Omit<Order, 'customerEmail'> & {
  /** The event that first fulfilled the order, once one has: another event about it fulfils nothing again. */
  fulfilledBy?: string;
};

export interface ChargeInput {
  source: string;
  eventId: string;
  /**
   * `<event ID>:charge:<attempt>`: the same for this attempt on every activity retry, reset and
   * re-run, never a run ID. (The bare event ID for charges scheduled before payment retries.)
   */
  idempotencyKey: string;
  /** Which charge of the order this is, counted by the workflow from 1; absent before payment retries (1). */
  attempt?: number;
  /** The PaymentIntent an earlier attempt's decline left, confirmed again instead of creating another. */
  paymentIntentId?: string;
  orderId: string;
  amount: number;
  currency: string;
  customer: string;
  paymentMethod: string;
}

export interface Charge {
  paymentIntentId: string;
  status: string;
}

export interface MarkFulfilledInput {
  source: string;
  eventId: string;
  idempotencyKey: string;
  paymentIntentId: string;
  orderId: string;
}

/** A refund recorded against an order (`recordCheckoutRefund`): the refund event's ID and what it says. */
export interface RefundInput extends StepKey {
  orderId: string;
  refundEventId: string;
  chargeId: string | null;
  amountRefunded: number | null;
  currency: string | null;
}
