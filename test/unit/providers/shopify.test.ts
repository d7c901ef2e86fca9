import { createShopifyAdapter } from '../../../src/providers/shopify';
import { SignatureVerificationError } from '../../../src/core/delivery-errors';
import { CATALOG_SECRETS, shopifyHeaders } from '../../support/signing';
import ordersPaid from '../../../src/providers/fixtures/shopify.orders-paid.json';

const adapter = createShopifyAdapter({ source: 'shopify', secrets: [CATALOG_SECRETS.shopify, CATALOG_SECRETS.shopifyRotated] });
const body = JSON.stringify(ordersPaid);
const verify = async (payload: string, headers: Record<string, string>) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt: new Date('2026-12-01T10:00:05Z') })).events[0]!;

describe('shopify adapter', () => {
  it('accepts a delivery signed as @shopify/shopify-api signs, with the event ID, the topic and the order', async () => {
    const headers = shopifyHeaders(body, CATALOG_SECRETS.shopify, {
      eventId: 'f6c5bd6c-7b1f-4a43-8f0b-8f3c4d1d3e11',
      webhookId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
    });
    expect(await verify(body, headers)).toMatchObject({
      id: 'f6c5bd6c-7b1f-4a43-8f0b-8f3c4d1d3e11',
      type: 'orders/paid',
      subject: String(ordersPaid.id),
      occurredAt: '2026-12-01T10:00:00.000Z',
      payload: ordersPaid,
    });
  });

  it('takes X-Shopify-Webhook-Id when the shop sends no X-Shopify-Event-Id', async () => {
    expect((await verify(body, shopifyHeaders(body, CATALOG_SECRETS.shopify, { webhookId: 'only-webhook-id' }))).id).toBe('only-webhook-id');
  });

  it('accepts the previous secret, and refuses a tampered body, another secret and a missing signature', async () => {
    expect((await verify(body, shopifyHeaders(body, CATALOG_SECRETS.shopifyRotated, { eventId: 'e-2' }))).id).toBe('e-2');
    const headers = shopifyHeaders(body, CATALOG_SECRETS.shopify, { eventId: 'e-3' });
    await expect(verify(body.replace('paid', 'pending'), headers)).rejects.toThrow(/X-Shopify-Hmac-SHA256 does not match/);
    await expect(verify(body, shopifyHeaders(body, 'not-our-secret', { eventId: 'e-3' }))).rejects.toThrow(SignatureVerificationError);
    const { 'x-shopify-hmac-sha256': _omitted, ...unsigned } = headers;
    await expect(verify(body, unsigned)).rejects.toThrow(/x-shopify-hmac-sha256 header is missing/);
  });

  it('refuses a signed delivery without its topic, naming the header', async () => {
    const { 'x-shopify-topic': _omitted, ...headers } = shopifyHeaders(body, CATALOG_SECRETS.shopify, { eventId: 'e-4' });
    await expect(verify(body, headers)).rejects.toThrow(/lacks the .*topic/i);
  });
});
