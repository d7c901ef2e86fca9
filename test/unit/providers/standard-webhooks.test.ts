import { ConfigError, MalformedEventError, SignatureVerificationError } from '../../../src/errors';
import { createStandardWebhooksAdapter } from '../../../src/providers/standard-webhooks';
import { ed25519KeyPair, SECRETS, standardHeaders } from '../../support/signing';

const keys = ed25519KeyPair();
const adapter = createStandardWebhooksAdapter({ source: 'standard', secrets: [SECRETS.standard, SECRETS.standardRotated], publicKeys: [keys.whpk] });
const body = JSON.stringify({ type: 'order.created', timestamp: '2026-12-01T10:00:00Z', data: { orderId: 'ord_1', amount: 4200 } });
const signedAt = new Date('2026-12-01T10:00:00Z');
const verify = (payload: string, headers: Record<string, string>, receivedAt = signedAt) =>
  adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt });

describe('createStandardWebhooksAdapter().verify', () => {
  it('accepts a v1 signature made by the standardwebhooks package', () => {
    const verified = verify(body, standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt }));
    expect(verified).toMatchObject({ id: 'msg_1', type: 'order.created', occurredAt: '2026-12-01T10:00:00.000Z', subject: 'ord_1' });
    expect(verified.payload).toEqual(JSON.parse(body));
  });

  it('accepts the second of two secrets, and a header carrying several signatures', () => {
    const rotated = standardHeaders(body, SECRETS.standardRotated, { id: 'msg_2', timestamp: signedAt });
    expect(verify(body, rotated).id).toBe('msg_2');
    const other = standardHeaders(body, `whsec_${Buffer.from('an unrelated key').toString('base64')}`, { id: 'msg_2', timestamp: signedAt });
    const both = { ...rotated, 'webhook-signature': `${other['webhook-signature']} ${rotated['webhook-signature']}` };
    expect(verify(body, both).id).toBe('msg_2');
  });

  it('accepts a v1a ed25519 signature checked with the whpk_ public key', () => {
    const seconds = Math.floor(signedAt.getTime() / 1000);
    const headers = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(seconds), 'webhook-signature': keys.sign('msg_a', seconds, body) };
    expect(verify(body, headers).id).toBe('msg_a');
  });

  it('rejects a v1a signature from another key pair', () => {
    const seconds = Math.floor(signedAt.getTime() / 1000);
    const headers = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(seconds), 'webhook-signature': ed25519KeyPair().sign('msg_a', seconds, body) };
    expect(() => verify(body, headers)).toThrow(SignatureVerificationError);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('rejects a delivery without %s', (header) => {
    const headers: Record<string, string> = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    delete headers[header];
    expect(() => verify(body, headers)).toThrow(`The ${header} header is missing.`);
  });

  it('rejects a signature made with another secret, and a body changed after signing', () => {
    const wrong = standardHeaders(body, `whsec_${Buffer.from('someone else').toString('base64')}`, { id: 'msg_1', timestamp: signedAt });
    expect(() => verify(body, wrong)).toThrow(/does not match/);
    const right = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    expect(() => verify(body.replace('4200', '1'), right)).toThrow(/does not match/);
    expect(() => verify(body, { ...right, 'webhook-id': 'msg_other' })).toThrow(/does not match/);
  });

  it.each([
    ['older', -301],
    ['newer', 301],
  ])('rejects a timestamp more than 300 s %s than the receipt time', (_direction, offsetSeconds) => {
    const headers = standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    const receivedAt = new Date(signedAt.getTime() - offsetSeconds * 1000);
    expect(() => verify(body, headers, receivedAt)).toThrow(/outside the 300 s tolerance/);
  });

  it('rejects a timestamp that is not whole seconds', () => {
    const headers = { ...standardHeaders(body, SECRETS.standard, { id: 'msg_1', timestamp: signedAt }), 'webhook-timestamp': '2026-12-01' };
    expect(() => verify(body, headers)).toThrow(/whole seconds/);
  });

  it.each([
    ['malformed JSON', '{"type":', /not valid JSON/],
    ['no type', JSON.stringify({ data: {} }), /no type/],
  ])('rejects a correctly signed body with %s', (_reason, payload, message) => {
    const headers = standardHeaders(payload, SECRETS.standard, { id: 'msg_1', timestamp: signedAt });
    expect(() => verify(payload, headers)).toThrow(MalformedEventError);
    expect(() => verify(payload, headers)).toThrow(message);
  });

  it('refuses to start with a secret or public key in the wrong format', () => {
    expect(() => createStandardWebhooksAdapter({ source: 's', secrets: ['whsec_not base64!'], publicKeys: [] })).toThrow(ConfigError);
    expect(() => createStandardWebhooksAdapter({ source: 's', secrets: [], publicKeys: ['whpk_c2hvcnQ='] })).toThrow(ConfigError);
  });
});
