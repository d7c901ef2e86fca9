import { Resend } from 'resend';
import Stripe from 'stripe';
import { createStripeClient } from '../../src/core/stripe-client';
import { startResendStandIn, type ResendStandIn } from '../support/resend-stand-in';
import { startStripeStandIn, type StripeStandIn } from '../../src/dev/stripe-stand-in';

/** The stand-ins honour Idempotency-Key as Stripe and Resend document it, seen through the real SDKs. */
let stripeStandIn: StripeStandIn;
let resendStandIn: ResendStandIn;
let stripe: Stripe;
let resend: Resend;
beforeAll(async () => {
  stripeStandIn = await startStripeStandIn();
  resendStandIn = await startResendStandIn();
  stripe = createStripeClient('sk_test_stand_in', stripeStandIn.url);
  resend = new Resend('re_test', { baseUrl: resendStandIn.url });
});
afterAll(async () => {
  await stripeStandIn.close();
  await resendStandIn.close();
});

const charge = { amount: 1000, currency: 'eur', customer: 'cus_1', payment_method: 'pm_card_visa', confirm: true, off_session: true };

describe('Stripe stand-in', () => {
  it('replays the stored response for the same key and parameters, flagged Idempotent-Replayed', async () => {
    const first = await stripe.paymentIntents.create(charge, { idempotencyKey: 'key-replay' });
    const again = await stripe.paymentIntents.create(charge, { idempotencyKey: 'key-replay' });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(stripeStandIn.charges().filter((intent) => intent.id === first.id)).toHaveLength(1);
  });

  it('refuses the same key with other parameters: 400 idempotency_error', async () => {
    await stripe.paymentIntents.create(charge, { idempotencyKey: 'key-mismatch' });
    await expect(stripe.paymentIntents.create({ ...charge, amount: 2000 }, { idempotencyKey: 'key-mismatch' })).rejects.toMatchObject({
      type: 'StripeIdempotencyError',
      statusCode: 400,
    });
  });

  it('answers 409 to a repeat while the first request is still running', async () => {
    const held = stripeStandIn.holdNext('processing');
    const first = stripe.paymentIntents.create(charge, { idempotencyKey: 'key-concurrent' });
    const release = await held;
    await expect(stripe.paymentIntents.create(charge, { idempotencyKey: 'key-concurrent' })).rejects.toMatchObject({ statusCode: 409 });
    release();
    expect((await first).status).toBe('succeeded');
  });

  it('declines pm_card_chargeDeclined as a card_error', async () => {
    await expect(
      stripe.paymentIntents.create({ ...charge, payment_method: 'pm_card_chargeDeclined' }, { idempotencyKey: 'key-decline' }),
    ).rejects.toMatchObject({
      type: 'StripeCardError',
      decline_code: 'generic_decline',
    });
  });

  it('confirms a declined PaymentIntent again with a new payment method, once: a succeeded one cannot be confirmed', async () => {
    const declined = await stripe.paymentIntents
      .create({ ...charge, payment_method: 'pm_card_chargeDeclined' }, { idempotencyKey: 'key-retry-1' })
      .catch((error: Stripe.errors.StripeCardError) => error);
    const id = (declined as Stripe.errors.StripeCardError).payment_intent!.id;
    expect((declined as Stripe.errors.StripeCardError).payment_intent).toMatchObject({ status: 'requires_payment_method' });
    await expect(
      stripe.paymentIntents.confirm(id, { payment_method: 'pm_card_chargeDeclined', off_session: true }, { idempotencyKey: 'key-retry-2' }),
    ).rejects.toMatchObject({ type: 'StripeCardError' });
    expect(await stripe.paymentIntents.confirm(id, { payment_method: 'pm_card_visa', off_session: true }, { idempotencyKey: 'key-retry-3' })).toMatchObject({
      id,
      status: 'succeeded',
      payment_method: 'pm_card_visa',
    });
    await expect(
      stripe.paymentIntents.confirm(id, { payment_method: 'pm_card_visa', off_session: true }, { idempotencyKey: 'key-retry-4' }),
    ).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'payment_intent_unexpected_state',
    });
    // The first decline's stored answer is still the decline.
    await expect(
      stripe.paymentIntents.create({ ...charge, payment_method: 'pm_card_chargeDeclined' }, { idempotencyKey: 'key-retry-1' }),
    ).rejects.toMatchObject({ type: 'StripeCardError' });
  });

  it('refuses an unknown payment method as a request error and stores nothing under its key', async () => {
    await expect(stripe.paymentIntents.create({ ...charge, payment_method: 'pm_nope' }, { idempotencyKey: 'key-unknown-pm' })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'resource_missing',
    });
    expect(
      await stripe.paymentIntents.create({ ...charge, payment_method: 'pm_nope' }, { idempotencyKey: 'key-unknown-pm' }).catch(() => 'refused again'),
    ).toBe('refused again');
    expect(stripeStandIn.requests.filter((request) => request.idempotencyKey === 'key-unknown-pm').map((request) => request.replayed)).toEqual([false, false]);
  });
});

describe('Resend stand-in', () => {
  const email = { from: 'shop@example.com', to: 'ada@example.com', subject: 'Hi', text: 'Hello' };

  it('sends once per key and body, answering a repeat with the same email ID', async () => {
    const first = await resend.emails.send(email, { idempotencyKey: 'mail-1' });
    const again = await resend.emails.send(email, { idempotencyKey: 'mail-1' });
    expect(again.data?.id).toBe(first.data?.id);
    expect(resendStandIn.emails.filter((sent) => sent.idempotencyKey === 'mail-1')).toHaveLength(1);
  });

  it('refuses the same key with another body: 409 invalid_idempotent_request', async () => {
    await resend.emails.send(email, { idempotencyKey: 'mail-2' });
    const { error } = await resend.emails.send({ ...email, subject: 'Other' }, { idempotencyKey: 'mail-2' });
    expect(error).toMatchObject({ name: 'invalid_idempotent_request', statusCode: 409 });
  });
});
