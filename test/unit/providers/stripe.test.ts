import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import Stripe from 'stripe';
import { createStripeAdapter } from '../../../src/providers/stripe';
import { customerThin } from '../../support/events';
import { SECRETS, stripeEvent, stripeHeaders } from '../../support/signing';

const adapter = createStripeAdapter({ source: 'stripe', secrets: [SECRETS.stripe, SECRETS.stripeRotated] });
const verify = async (body: string, headers: Record<string, string>, receivedAt = new Date()) =>
  (await adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt })).events[0]!;

describe('createStripeAdapter().verify', () => {
  it('accepts an event signed by stripe.webhooks.generateTestHeaderString and reads id, type, created and the object', async () => {
    const event = stripeEvent({ id: 'evt_1', created: 1_764_000_000 });
    const body = JSON.stringify(event);
    const verified = await verify(body, stripeHeaders(body, SECRETS.stripe, 1_764_000_000), new Date(1_764_000_100_000));
    expect(verified).toMatchObject({
      id: 'evt_1',
      type: 'checkout.session.completed',
      occurredAt: '2025-11-24T16:00:00.000Z',
      subject: 'cs_test_123',
      payload: event,
    });
  });

  it('accepts a thin event notification (v2.core.event): its ID, type, date-time and related object; a notification that is none is 400', async () => {
    const thin = customerThin('cus_thin', 'v1.customer.updated', new Date('2026-12-06T10:00:00.123Z'));
    expect(await verify(thin.body, thin.headers, new Date())).toMatchObject({
      id: thin.id,
      type: 'v1.customer.updated',
      occurredAt: '2026-12-06T10:00:00.123Z',
      subject: 'cus_thin',
      payload: JSON.parse(thin.body),
    });
    const undated = JSON.stringify({ ...JSON.parse(thin.body), created: 'yesterday' });
    await expect(verify(undated, stripeHeaders(undated, SECRETS.stripe))).rejects.toThrow(MalformedEventError);
    await expect(verify(undated, stripeHeaders(undated, SECRETS.stripe))).rejects.toThrow('The event notification has no "created" date-time.');
  });

  it('signs a sample of a thin type (send --thin) as a notification stripe-node parses, naming the object by reference', async () => {
    const signed = adapter.sign({
      id: 'evt_sample_thin',
      type: 'v1.customer.updated',
      payload: { id: 'cus_sample', object: 'customer' },
      timestamp: new Date(),
    });
    const parsed = new Stripe('sk_test_unused').parseEventNotification(signed.body, signed.headers['stripe-signature']!, SECRETS.stripe);
    expect(parsed).toMatchObject({
      id: 'evt_sample_thin',
      object: 'v2.core.event',
      type: 'v1.customer.updated',
      related_object: { id: 'cus_sample', type: 'customer', url: '/v1/customers/cus_sample' },
    });
    expect((await verify(signed.body, signed.headers)).subject).toBe('cus_sample');
  });

  it('accepts the second of two configured secrets (rotation)', async () => {
    const body = JSON.stringify(stripeEvent({ id: 'evt_rotated' }));
    expect((await verify(body, stripeHeaders(body, SECRETS.stripeRotated))).id).toBe('evt_rotated');
  });

  it.each([
    ['a missing Stripe-Signature header', () => ({ 'content-type': 'application/json' }), /Stripe-Signature header is missing/],
    ['a signature made with another secret', (body: string) => stripeHeaders(body, 'whsec_someone_else'), /No signatures found matching/],
    ['a header without a v1 signature', () => ({ 'stripe-signature': 't=123,v0=abc' }), /No signatures found with expected scheme/],
  ])('rejects %s', async (_reason, headersFor, message) => {
    const body = JSON.stringify(stripeEvent());
    await expect(verify(body, headersFor(body) as Record<string, string>)).rejects.toThrow(SignatureVerificationError);
    await expect(verify(body, headersFor(body) as Record<string, string>)).rejects.toThrow(message);
  });

  it('rejects a body changed after signing', async () => {
    const body = JSON.stringify(stripeEvent({ id: 'evt_original' }));
    const headers = stripeHeaders(body, SECRETS.stripe);
    await expect(verify(body.replace('evt_original', 'evt_tampered'), headers)).rejects.toThrow(SignatureVerificationError);
  });

  it('rejects a timestamp more than 300 s before the receipt time', async () => {
    const body = JSON.stringify(stripeEvent());
    const signedAt = 1_764_000_000;
    await expect(verify(body, stripeHeaders(body, SECRETS.stripe, signedAt), new Date((signedAt + 301) * 1000))).rejects.toThrow(/outside the 300 s tolerance/);
    expect((await verify(body, stripeHeaders(body, SECRETS.stripe, signedAt), new Date((signedAt + 299) * 1000))).type).toBe('checkout.session.completed');
  });

  it('rejects a timestamp more than 300 s after the receipt time (stripe-node checks only the age)', async () => {
    const body = JSON.stringify(stripeEvent());
    const signedAt = 1_764_000_000;
    const tomorrow = stripeHeaders(body, SECRETS.stripe, signedAt + 86_400);
    await expect(verify(body, tomorrow, new Date(signedAt * 1000))).rejects.toThrow(SignatureVerificationError);
    await expect(verify(body, tomorrow, new Date(signedAt * 1000))).rejects.toThrow(/outside the 300 s tolerance/);
    await expect(verify(body, stripeHeaders(body, SECRETS.stripe, signedAt + 301), new Date(signedAt * 1000))).rejects.toThrow(/outside the 300 s tolerance/);
    expect((await verify(body, stripeHeaders(body, SECRETS.stripe, signedAt + 299), new Date(signedAt * 1000))).type).toBe('checkout.session.completed');
  });

  it.each([
    ['malformed JSON', '{"id": "evt_1",', /not valid JSON/],
    ['a JSON array', '[1, 2]', /must be a JSON object/],
    ['no event ID', JSON.stringify({ ...stripeEvent(), id: undefined }), /no ID/],
    ['no event type', JSON.stringify({ ...stripeEvent(), type: '' }), /no type/],
  ])('rejects a correctly signed body with %s', async (_reason, body, message) => {
    await expect(verify(body, stripeHeaders(body, SECRETS.stripe))).rejects.toThrow(MalformedEventError);
    await expect(verify(body, stripeHeaders(body, SECRETS.stripe))).rejects.toThrow(message);
  });
});
