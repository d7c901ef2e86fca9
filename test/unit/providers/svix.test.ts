import { createStandardWebhooksAdapter } from '../../../src/providers/standard-webhooks';
import { CATALOG_SECRETS, svixHeaders } from '../../support/signing';

const adapter = createStandardWebhooksAdapter({
  source: 'svix',
  secrets: [CATALOG_SECRETS.svix, CATALOG_SECRETS.svixRotated],
  publicKeys: [],
  flavour: 'svix',
});
const signedAt = new Date('2026-12-01T10:00:00Z');
// Clerk's user.created, as Clerk (on Svix) sends it.
const body = JSON.stringify({ data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user' }, object: 'event', type: 'user.created' });
const verify = async (payload: string, headers: Record<string, string>, receivedAt = signedAt) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt })).events[0]!;

describe('svix adapter (Clerk, Resend and other Svix senders)', () => {
  it('accepts a delivery signed by the svix package, and reads svix-id and "type"', async () => {
    expect(await verify(body, svixHeaders(body, CATALOG_SECRETS.svix, { id: 'msg_2Lh9KRb0pzN4LePd3XiA4', timestamp: signedAt }))).toMatchObject({
      id: 'msg_2Lh9KRb0pzN4LePd3XiA4',
      type: 'user.created',
      subject: 'user_29w83sxmDNGwOuEthce5gg56FcC',
      occurredAt: '2026-12-01T10:00:00.000Z',
    });
  });

  it('accepts the previous secret during a rotation', async () => {
    expect((await verify(body, svixHeaders(body, CATALOG_SECRETS.svixRotated, { id: 'msg_2', timestamp: signedAt }))).id).toBe('msg_2');
  });

  it('rejects a tampered body, another secret, a stale timestamp and Standard Webhooks header names', async () => {
    const headers = svixHeaders(body, CATALOG_SECRETS.svix, { id: 'msg_3', timestamp: signedAt });
    await expect(verify(body.replace('user.created', 'user.deleted'), headers)).rejects.toThrow(/svix-signature does not match/);
    await expect(
      verify(body, svixHeaders(body, `whsec_${Buffer.from('someone else').toString('base64')}`, { id: 'msg_3', timestamp: signedAt })),
    ).rejects.toThrow(/does not match/);
    await expect(verify(body, headers, new Date(signedAt.getTime() + 301_000))).rejects.toThrow(/svix-timestamp is outside the 300 s tolerance/);
    const renamed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace('svix-', 'webhook-'), value]));
    await expect(verify(body, renamed)).rejects.toThrow(/svix-id header is missing/);
  });
});
