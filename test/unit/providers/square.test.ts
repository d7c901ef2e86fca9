import { createSquareAdapter } from '../../../src/providers/square';
import { CATALOG_SECRETS, squareHeaders } from '../../support/signing';

const url = CATALOG_SECRETS.squareUrl;
const adapter = createSquareAdapter({ source: 'square', secrets: [CATALOG_SECRETS.square, CATALOG_SECRETS.squareRotated], url });
const body = JSON.stringify({
  merchant_id: '6SSW7HV8K2ST5',
  type: 'payment.updated',
  event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
  created_at: '2026-12-01T10:00:00.000Z',
  data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', object: { payment: { id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', status: 'COMPLETED' } } },
});
const verify = async (payload: string, headers: Record<string, string>) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt: new Date() })).events[0]!;

describe('square adapter', () => {
  it('verifies the configured notification URL and the body, reading event_id and type', async () => {
    expect(await verify(body, squareHeaders(body, CATALOG_SECRETS.square, url))).toMatchObject({
      id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
      type: 'payment.updated',
      subject: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
      occurredAt: '2026-12-01T10:00:00.000Z',
    });
    expect((await verify(body, squareHeaders(body, CATALOG_SECRETS.squareRotated, url))).type).toBe('payment.updated');
  });

  it('refuses a signature over another URL (as a proxy would rebuild it), a tampered body and another key', async () => {
    await expect(verify(body, squareHeaders(body, CATALOG_SECRETS.square, 'http://10.0.0.7:3000/webhooks/square'))).rejects.toThrow(
      /does not match https:\/\/hooks\.example\.com/,
    );
    await expect(verify(body.replace('COMPLETED', 'FAILED'), squareHeaders(body, CATALOG_SECRETS.square, url))).rejects.toThrow(/does not match/);
    await expect(verify(body, squareHeaders(body, 'another-key', url))).rejects.toThrow(/does not match/);
    await expect(verify(body, { 'content-type': 'application/json' })).rejects.toThrow(/x-square-hmacsha256-signature header is missing/);
  });

  it("gives the square package's WebhooksHelper verdict on signed, altered and other-key deliveries", async () => {
    const { WebhooksHelper } = await import('square');
    const cases = [
      { payload: body, headers: squareHeaders(body, CATALOG_SECRETS.square, url) },
      { payload: body, headers: squareHeaders(body, CATALOG_SECRETS.square, `${url}/`) },
      { payload: body.replace('COMPLETED', 'FAILED'), headers: squareHeaders(body, CATALOG_SECRETS.square, url) },
      { payload: `${body} `, headers: squareHeaders(body, CATALOG_SECRETS.square, url) },
      { payload: body, headers: squareHeaders(body, 'another-key', url) },
    ];
    const verdicts = [];
    for (const { payload, headers } of cases) {
      const ours = await verify(payload, headers).then(
        () => true,
        () => false,
      );
      const library = await WebhooksHelper.verifySignature({
        requestBody: payload,
        signatureHeader: headers['x-square-hmacsha256-signature']!,
        signatureKey: CATALOG_SECRETS.square,
        notificationUrl: url,
      });
      verdicts.push({ ours, library });
    }
    expect(verdicts.map((verdict) => verdict.library)).toEqual([true, false, false, false, false]);
    expect(verdicts.map((verdict) => verdict.ours)).toEqual(verdicts.map((verdict) => verdict.library));
  });
});
