/**
 * The `type` of every ApplicationFailure an activity or workflow throws on purpose. Workflows match
 * on them, operators read them in the UI and `events show`; none of them is retried, but for a body not
 * stored yet, which a step looks for again for a while (activities/event-body.ts).
 */
export const FailureType = {
  /** Stripe declined the card (StripeCardError). */
  CARD_DECLINED: 'CardDeclined',
  /** Stripe refused the request itself; it would fail the same way again. */
  STRIPE_INVALID_REQUEST: 'StripeInvalidRequest',
  /** The email provider refused the email permanently (bad key, bad address). */
  EMAIL_REJECTED: 'EmailRejected',
  /** `order.created` lacks a field the charge needs. */
  INVALID_ORDER: 'InvalidOrder',
  /** The order's charge was declined, in a workflow started before payment retries: it ends failed, after the customer was told. */
  PAYMENT_DECLINED: 'PaymentDeclined',
  /** An event's stored body is gone (erased on request, or never stored again by a redelivery), so no step can read it. */
  EVENT_BODY_MISSING: 'EventBodyMissing',
  /** A `/v1` message's stored payload is gone, so no attempt can send it. */
  PAYLOAD_MISSING: 'PayloadMissing',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];
