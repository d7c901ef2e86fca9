import { ApplicationFailure } from '@temporalio/activity';
import Stripe from 'stripe';
import type { Database } from '../src/db/database';
import { findStep, recordStep } from '../src/db/ledger';

/** Failure types the workflows match on; none of them is retried. */
export const StripeFailure = {
  CARD_DECLINED: 'CardDeclined',
  INVALID_REQUEST: 'StripeInvalidRequest',
} as const;

export interface ChargeInput {
  source: string;
  eventId: string;
  /** The event ID: the same on every attempt, reset and re-run, never a run ID. */
  idempotencyKey: string;
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

/**
 * Stripe calls, each with an Idempotency-Key. Stripe forgets keys after 24 hours, so before any
 * create the ledger is checked for the object an earlier attempt made; a re-run days later finds it.
 * https://docs.stripe.com/api/idempotent_requests
 */
export function createStripeActivities({ db, stripe }: { db: Database; stripe: Stripe }) {
  return {
    async chargeOrder(input: ChargeInput): Promise<Charge> {
      const step = 'charge';
      const done = await findStep<Charge>(db, input.source, input.eventId, step);
      if (done) return done.result;
      const intent = await callStripe(() =>
        stripe.paymentIntents.create(
          {
            amount: input.amount,
            currency: input.currency,
            customer: input.customer,
            payment_method: input.paymentMethod,
            confirm: true,
            off_session: true,
            metadata: { order_id: input.orderId, event_id: input.eventId },
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      const charge = { paymentIntentId: intent.id, status: intent.status };
      await recordStep(db, input.source, input.eventId, step, { externalId: intent.id, result: charge });
      return charge;
    },

    /** Marks the checkout's PaymentIntent fulfilled in Stripe (metadata), once. */
    async markPaymentIntentFulfilled(input: { source: string; eventId: string; idempotencyKey: string; paymentIntentId: string; orderId: string }): Promise<void> {
      const step = 'mark-fulfilled';
      if (await findStep(db, input.source, input.eventId, step)) return;
      const intent = await callStripe(() =>
        stripe.paymentIntents.update(
          input.paymentIntentId,
          { metadata: { fulfilled: 'true', order_id: input.orderId } },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      await recordStep(db, input.source, input.eventId, step, { externalId: intent.id, result: { metadata: intent.metadata } });
    },
  };
}

/**
 * Declines and invalid requests will fail the same way again: non-retryable. Rate limits, 5xx,
 * connection errors and a key still in use (409) are thrown as they are, for Temporal to retry.
 */
async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeCardError) {
      throw ApplicationFailure.nonRetryable(error.message, StripeFailure.CARD_DECLINED, {
        code: error.code,
        declineCode: error.decline_code,
        paymentIntentId: error.payment_intent?.id,
      });
    }
    if (error instanceof Stripe.errors.StripeInvalidRequestError || (error instanceof Stripe.errors.StripeIdempotencyError && error.statusCode === 400)) {
      throw ApplicationFailure.nonRetryable(error.message, StripeFailure.INVALID_REQUEST, { code: error.code, requestId: error.requestId });
    }
    throw error;
  }
}
