import { ApplicationFailure } from '@temporalio/activity';
import Stripe from 'stripe';
import { FailureType, type Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { beginChargeAttempt, finishChargeAttempt } from '../src/db/charge-attempts';
import { callOnce } from '../src/db/ledger';
import { count } from './metrics';

/**
 * Stripe calls, each with an Idempotency-Key. Stripe forgets keys after 24 hours, so before any
 * call the ledger is checked for what an earlier attempt did; a re-run days later finds it.
 * https://docs.stripe.com/api/idempotent_requests
 */
export function createStripeActivities({ db, stripe }: { db: Database; stripe: Stripe }): Pick<Activities, 'chargeOrder' | 'markPaymentIntentFulfilled'> {
  return {
    /**
     * One charge attempt, recorded in `charge_attempts` before the call and after it (see
     * `beginChargeAttempt`): an event that has a successful attempt returns it and calls nothing; an
     * attempt that was declined is declined again without a call. When an earlier call never
     * recorded its end (the attempt is pending), the PaymentIntent it may have charged is looked up
     * by its metadata first. A retry after a decline confirms the declined PaymentIntent again with
     * the new payment method, as Stripe advises, so the order has one PaymentIntent and Stripe
     * itself refuses to charge it twice.
     */
    async chargeOrder(input) {
      const key = { source: input.source, eventId: input.eventId };
      const attempt = input.attempt ?? 1;
      const begun = await beginChargeAttempt(db, key, { attempt, idempotencyKey: input.idempotencyKey, paymentMethod: input.paymentMethod });
      if (begun.state === 'done') {
        const { record: done } = begun;
        if (done.outcome === 'succeeded') return { paymentIntentId: done.paymentIntentId!, status: done.paymentIntentStatus ?? 'succeeded' };
        throw ApplicationFailure.nonRetryable(done.failure?.message ?? 'The card was declined.', FailureType.CARD_DECLINED, done.failure?.details ?? {});
      }
      if (begun.state === 'pending') {
        const { record: standing } = begun;
        const intent = await findCharge(stripe, input.source, input.eventId);
        if (intent) {
          await finishChargeAttempt(db, key, standing.attempt, { outcome: 'succeeded', paymentIntentId: intent.id, paymentIntentStatus: intent.status });
          return { paymentIntentId: intent.id, status: intent.status };
        }
        // Temporal retries this until the other attempt has ended (its activity is still running, or retrying).
        if (standing.attempt !== attempt)
          throw new Error(`Charge attempt ${standing.attempt} of event ${input.eventId} is still pending; attempt ${attempt} waits for it to end.`);
      }

      const options = { idempotencyKey: input.idempotencyKey };
      const metadata = { order_id: input.orderId, event_id: input.eventId, source: input.source };
      try {
        const intent = await countCharge(() =>
          input.paymentIntentId
            ? stripe.paymentIntents.confirm(input.paymentIntentId, { payment_method: input.paymentMethod, off_session: true }, options)
            : stripe.paymentIntents.create(
                {
                  amount: input.amount,
                  currency: input.currency,
                  customer: input.customer,
                  payment_method: input.paymentMethod,
                  confirm: true,
                  off_session: true,
                  metadata,
                },
                options,
              ),
        );
        await finishChargeAttempt(db, key, attempt, { outcome: 'succeeded', paymentIntentId: intent.id, paymentIntentStatus: intent.status });
        return { paymentIntentId: intent.id, status: intent.status };
      } catch (error) {
        const refused = error instanceof ApplicationFailure && error.type === FailureType.STRIPE_INVALID_REQUEST;
        if (error instanceof ApplicationFailure && (refused || error.type === FailureType.CARD_DECLINED)) {
          const details = (error.details?.[0] ?? {}) as Record<string, unknown>;
          const failure = { type: error.type!, message: error.message, details };
          await finishChargeAttempt(db, key, attempt, {
            outcome: refused ? 'refused' : 'declined',
            paymentIntentId: details.paymentIntentId as string | undefined,
            failure,
          });
        }
        throw error;
      }
    },

    /** Marks the checkout's PaymentIntent fulfilled in Stripe (metadata), once. */
    async markPaymentIntentFulfilled(input) {
      await callOnce(db, { source: input.source, eventId: input.eventId, step: 'mark-fulfilled', idempotencyKey: input.idempotencyKey }, async () => {
        const intent = await callStripe(() =>
          stripe.paymentIntents.update(
            input.paymentIntentId,
            { metadata: { fulfilled: 'true', order_id: input.orderId } },
            { idempotencyKey: input.idempotencyKey },
          ),
        );
        // Only the keys this step wrote: the rest of the PaymentIntent's metadata is the merchant's, and may name a person.
        return { externalId: intent.id, result: { metadata: { fulfilled: intent.metadata.fulfilled, order_id: intent.metadata.order_id } } };
      });
    },
  };
}

/** Makes the charge, counted by outcome (`durable_webhooks_charges`). */
async function countCharge<T>(create: () => Promise<T>): Promise<T> {
  try {
    const intent = await callStripe(create);
    count('charges', { outcome: 'succeeded' });
    return intent;
  } catch (error) {
    if (error instanceof ApplicationFailure && error.type === FailureType.CARD_DECLINED) count('charges', { outcome: 'declined' });
    throw error;
  }
}

/** Statuses of a PaymentIntent that charged, or is charging, the card. */
const CHARGED = new Set<Stripe.PaymentIntent.Status>(['succeeded', 'processing', 'requires_capture']);

/**
 * The PaymentIntent an earlier attempt made for this event, found by its metadata through Stripe's
 * search (https://docs.stripe.com/search#search-query-language). Search lags writes by about a
 * minute, far inside the 24 hours Stripe keeps the key, so an intent too fresh to be found is still
 * answered by the key.
 */
async function findCharge(stripe: Stripe, source: string, eventId: string): Promise<Stripe.PaymentIntent | undefined> {
  const quoted = (value: string) => `'${value.replace(/[\\']/g, (character) => `\\${character}`)}'`;
  const { data } = await stripe.paymentIntents.search({ query: `metadata['event_id']:${quoted(eventId)} AND metadata['source']:${quoted(source)}` });
  return data.find((intent) => CHARGED.has(intent.status));
}

/**
 * Declines and invalid requests will fail the same way again: non-retryable. Rate limits, 5xx,
 * connection errors and a key still in use (409) are thrown as they are, for Temporal to retry.
 */
export async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeCardError) {
      throw ApplicationFailure.nonRetryable(error.message, FailureType.CARD_DECLINED, {
        code: error.code,
        declineCode: error.decline_code,
        paymentIntentId: error.payment_intent?.id,
      });
    }
    if (error instanceof Stripe.errors.StripeInvalidRequestError || (error instanceof Stripe.errors.StripeIdempotencyError && error.statusCode === 400)) {
      throw ApplicationFailure.nonRetryable(error.message, FailureType.STRIPE_INVALID_REQUEST, { code: error.code, requestId: error.requestId });
    }
    throw error;
  }
}
