import { Paddle } from '@paddle/paddle-node-sdk';
import { createPaddleAdapter } from '../../../src/providers/paddle';
import { CATALOG_SECRETS, paddleHeaders } from '../../support/signing';

const adapter = createPaddleAdapter({ source: 'paddle', secrets: [CATALOG_SECRETS.paddle, CATALOG_SECRETS.paddleRotated] });
const body = JSON.stringify({
  event_id: 'evt_01hv8x2acma5ec3rsfhq4yq8rr',
  event_type: 'transaction.completed',
  occurred_at: '2026-12-01T10:00:00.000000Z',
  notification_id: 'ntf_01hv8x2af1ev7mrtmbq3vs5k2t',
  data: { id: 'txn_01hv8wptq8987qeep44cyrewp9', status: 'completed' },
});
// The SDK client sets up its Node.js crypto; its webhook helpers call no API.
const { webhooks } = new Paddle('pdl_sdbx_apikey_unused_by_webhook_helpers');
const now = () => Math.floor(Date.now() / 1000);
const verify = async (payload: string, headers: Record<string, string>, receivedAt = new Date()) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt })).events[0]!;

describe('paddle adapter', () => {
  it('accepts what @paddle/paddle-node-sdk accepts, reading event_id, event_type and the transaction', async () => {
    const headers = paddleHeaders(body, [CATALOG_SECRETS.paddle], now());
    // The SDK is the reference for what a valid Paddle-Signature is.
    expect(await webhooks.isSignatureValid(body, CATALOG_SECRETS.paddle, headers['paddle-signature']!)).toBe(true);
    expect(await verify(body, headers)).toMatchObject({
      id: 'evt_01hv8x2acma5ec3rsfhq4yq8rr',
      type: 'transaction.completed',
      subject: 'txn_01hv8wptq8987qeep44cyrewp9',
      occurredAt: '2026-12-01T10:00:00.000Z',
    });
  });

  it("accepts a header with several h1 values during Paddle's rotation, where the SDK keeps only the last", async () => {
    const headers = paddleHeaders(body, [CATALOG_SECRETS.paddle, 'pdl_ntfset_someone_else'], now());
    expect(await webhooks.isSignatureValid(body, CATALOG_SECRETS.paddle, headers['paddle-signature']!)).toBe(false);
    expect((await verify(body, headers)).id).toBe('evt_01hv8x2acma5ec3rsfhq4yq8rr');
  });

  it("refuses a tampered body, another secret, a malformed header and a timestamp past Paddle's 5 s", async () => {
    const signedAt = now();
    const headers = paddleHeaders(body, [CATALOG_SECRETS.paddle], signedAt);
    await expect(verify(body.replace('completed', 'canceled'), headers)).rejects.toThrow(/Paddle-Signature does not match/);
    await expect(verify(body, paddleHeaders(body, ['pdl_ntfset_other'], signedAt))).rejects.toThrow(/does not match/);
    await expect(verify(body, { 'paddle-signature': 'h1=abc' })).rejects.toThrow(/must be "ts=<seconds>;h1=<signature>"/);
    await expect(verify(body, headers, new Date((signedAt + 6) * 1000))).rejects.toThrow(/outside the 5 s tolerance/);
    expect((await verify(body, headers, new Date((signedAt + 5) * 1000))).id).toBe('evt_01hv8x2acma5ec3rsfhq4yq8rr');
  });
});
