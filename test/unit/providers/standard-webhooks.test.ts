import { ConfigError } from '../../../src/core/errors';
import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import { createStandardWebhooksAdapter } from '../../../src/providers/standard-webhooks';
import { ed25519KeyPair, SECRETS, standardHeaders } from '../../support/signing';

const keys = ed25519KeyPair();
const adapter = createStandardWebhooksAdapter({ source: 'standard', secrets: [SECRETS.standard, SECRETS.standardRotated], publicKeys: [keys.whpk] });
const body = JSON.stringify({ type: 'order.created', timestamp: '2026-12-01T10:00:00Z', data: { orderId: 'ord_1', amount: 4200 } });
const signedAt = new Date('2026-12-01T10:00:00Z');
const verify = async (payload: string, headers: Record<string, string>, receivedAt = signedAt) =>
  (await adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt })).events[0]!;

describe('createStandardWebhooksAdapter().verify', () => {
  it('accepts a v1 signature made by the standardwebhooks package', async () => {
    const verified = await verify(body, standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt }));
    expect(verified).toMatchObject({ id: 'msg_1', type: 'order.created', occurredAt: '2026-12-01T10:00:00.000Z', subject: 'ord_1' });
    expect(verified.payload).toEqual(JSON.parse(body));
  });

  it('accepts the second of two secrets, and a header carrying several signatures', async () => {
    const rotated = standardHeaders(body, SECRETS.standardRotated, { id: 'msg_2', timestamp: signedAt });
    expect((await verify(body, rotated)).id).toBe('msg_2');
    const other = standardHeaders(body, `whsec_${Buffer.from('an unrelated key').toString('base64')}`, { id: 'msg_2', timestamp: signedAt });
    const both = { ...rotated, 'webhook-signature': `${other['webhook-signature']} ${rotated['webhook-signature']}` };
    expect((await verify(body, both)).id).toBe('msg_2');
  });

  it('accepts a v1a ed25519 signature checked with the whpk_ public key', async () => {
    const seconds = Math.floor(signedAt.getTime() / 1000);
    const headers = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(seconds), 'webhook-signature': keys.sign('msg_a', seconds, body) };
    expect((await verify(body, headers)).id).toBe('msg_a');
  });

  it('rejects a v1a signature from another key pair', async () => {
    const seconds = Math.floor(signedAt.getTime() / 1000);
    const headers = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(seconds), 'webhook-signature': ed25519KeyPair().sign('msg_a', seconds, body) };
    await expect(verify(body, headers)).rejects.toThrow(SignatureVerificationError);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('rejects a delivery without %s', async (header) => {
    const headers: Record<string, string> = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    delete headers[header];
    await expect(verify(body, headers)).rejects.toThrow(`The ${header} header is missing.`);
  });

  it('rejects a signature made with another secret, and a body changed after signing', async () => {
    const wrong = standardHeaders(body, `whsec_${Buffer.from('someone else').toString('base64')}`, { id: 'msg_1', timestamp: signedAt });
    await expect(verify(body, wrong)).rejects.toThrow(/does not match/);
    const right = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    await expect(verify(body.replace('4200', '1'), right)).rejects.toThrow(/does not match/);
    await expect(verify(body, { ...right, 'webhook-id': 'msg_other' })).rejects.toThrow(/does not match/);
  });

  it.each([
    ['older', -301],
    ['newer', 301],
  ])('rejects a timestamp more than 300 s %s than the receipt time', async (_direction, offsetSeconds) => {
    const headers = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    const receivedAt = new Date(signedAt.getTime() - offsetSeconds * 1000);
    await expect(verify(body, headers, receivedAt)).rejects.toThrow(/outside the 300 s tolerance/);
  });

  it('rejects a timestamp that is not whole seconds', async () => {
    const headers = { ...standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt }), 'webhook-timestamp': '2026-12-01' };
    await expect(verify(body, headers)).rejects.toThrow(/whole seconds/);
  });

  it.each([
    ['malformed JSON', '{"type":', /not valid JSON/],
    ['no type', JSON.stringify({ data: {} }), /no type/],
  ])('rejects a correctly signed body with %s', async (_reason, payload, message) => {
    const headers = standardHeaders(payload, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    await expect(verify(payload, headers)).rejects.toThrow(MalformedEventError);
    await expect(verify(payload, headers)).rejects.toThrow(message);
  });

  it('refuses to start with a secret or public key in the wrong format', async () => {
    expect(() => createStandardWebhooksAdapter({ source: 's', secrets: ['whsec_not base64!'], publicKeys: [] })).toThrow(ConfigError);
    expect(() => createStandardWebhooksAdapter({ source: 's', secrets: [], publicKeys: ['whpk_c2hvcnQ='] })).toThrow(ConfigError);
  });
});
