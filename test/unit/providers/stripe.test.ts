import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import { createStripeAdapter } from '../../../src/providers/stripe';
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
