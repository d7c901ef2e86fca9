import { createLinearAdapter } from '../../../src/providers/linear';
import { CATALOG_SECRETS, linearHeaders } from '../../support/signing';

const adapter = createLinearAdapter({ source: 'linear', secrets: [CATALOG_SECRETS.linear, CATALOG_SECRETS.linearRotated] });
const sentAt = Date.parse('2026-12-01T10:00:00Z');
const body = JSON.stringify({
  action: 'create',
  type: 'Issue',
  createdAt: '2026-12-01T09:59:59.000Z',
  data: { id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9', identifier: 'ENG-42', title: 'Retries counted twice' },
  url: 'https://linear.app/acme/issue/ENG-42',
  organizationId: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a',
  webhookTimestamp: sentAt,
  webhookId: '000042e3-d123-4980-b49f-8e140eef9329',
});
const verify = async (payload: string, headers: Record<string, string>, receivedAt = new Date(sentAt + 2000)) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt })).events[0]!;

describe('linear adapter', () => {
  it("verifies with LinearWebhookClient at the receiver's clock, days before the library's own clock", async () => {
    const headers = linearHeaders(body, CATALOG_SECRETS.linear, '1c5e8bd2-5bc0-4d0c-8b3a-0d8c4a9b2f61');
    expect(await verify(body, headers)).toMatchObject({
      id: '1c5e8bd2-5bc0-4d0c-8b3a-0d8c4a9b2f61',
      type: 'Issue.create',
      subject: 'ENG-42',
      occurredAt: '2026-12-01T09:59:59.000Z',
    });
    expect((await verify(body, linearHeaders(body, CATALOG_SECRETS.linearRotated, 'd-2'))).id).toBe('d-2');
  });

  it('refuses a webhookTimestamp more than 60 s away, a tampered body, another secret and a body without a timestamp', async () => {
    const headers = linearHeaders(body, CATALOG_SECRETS.linear, 'd-3');
    await expect(verify(body, headers, new Date(sentAt + 61_000))).rejects.toThrow(/"webhookTimestamp" is outside the 60 s tolerance/);
    await expect(verify(body, headers, new Date(sentAt - 61_000))).rejects.toThrow(/outside the 60 s tolerance/);
    await expect(verify(body.replace('create', 'remove'), headers)).rejects.toThrow(/Linear-Signature does not match/);
    await expect(verify(body, linearHeaders(body, 'lin_wh_other', 'd-3'))).rejects.toThrow(/does not match/);
    const untimed = JSON.stringify({ action: 'create', type: 'Issue', data: {} });
    await expect(verify(untimed, linearHeaders(untimed, CATALOG_SECRETS.linear, 'd-4'))).rejects.toThrow(/no numeric "webhookTimestamp"/);
  });
});
