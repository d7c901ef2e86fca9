import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadReceiverConfig } from '../../../src/config';
import { createAdapter } from '../../../src/providers/registry';

/** A WEBHOOKS_CONFIG file with one hmac source, as a user would write it. */
function hmacSource(declaration: string) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-hmac-')), 'webhooks.yaml');
  writeFileSync(file, `sources:\n  - name: intercom\n    kind: hmac\n    secret: intercom-client-secret\n${declaration}`);
  return () => loadReceiverConfig({ WEBHOOKS_CONFIG: file }).sources.find((source) => source.name === 'intercom')!;
}

const INTERCOM = `    signature: { header: X-Hub-Signature, algorithm: sha1, encoding: hex, prefix: "sha1=", signed: "{body}" }
    id: { pointer: /id }
    type: { pointer: /topic }
`;
// Intercom's notification: HMAC-SHA1 of the body with the app's client secret, in X-Hub-Signature.
const notification = JSON.stringify({
  type: 'notification_event',
  id: 'notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3',
  topic: 'conversation.user.created',
  created_at: 1764583200,
  data: { item: { type: 'conversation', id: '147' } },
});
const receivedAt = new Date('2026-12-01T10:00:00Z');

describe('hmac kind (WEBHOOKS_CONFIG)', () => {
  it('verifies an Intercom-shaped sender declared without code, reading the ID and type by JSON pointer', async () => {
    const adapter = createAdapter(hmacSource(INTERCOM)());
    const headers = { 'x-hub-signature': `sha1=${createHmac('sha1', 'intercom-client-secret').update(notification).digest('hex')}` };
    const { events } = await adapter.verify({ rawBody: Buffer.from(notification), headers, receivedAt });
    expect(events).toEqual([expect.objectContaining({ id: 'notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3', type: 'conversation.user.created' })]);
    await expect(adapter.verify({ rawBody: Buffer.from(notification.replace('147', '148')), headers, receivedAt })).rejects.toThrow(
      /x-hub-signature does not match/,
    );
    await expect(adapter.verify({ rawBody: Buffer.from(notification), headers: { 'x-hub-signature': 'sha1=00' }, receivedAt })).rejects.toThrow(
      /does not match/,
    );
  });

  it('signs {timestamp}.{body} in base64 sha256 with a timestamp header and tolerance, and reads the ID from a header', async () => {
    const adapter = createAdapter(
      hmacSource(`    signature: { header: X-Signature, algorithm: sha256, encoding: base64, signed: "{timestamp}.{body}", timestampHeader: X-Timestamp, toleranceSeconds: 60 }
    id: { header: X-Delivery }
    type: { pointer: /event/name }
    unsignedHeadersOk: true
`)(),
    );
    const body = JSON.stringify({ event: { name: 'invoice.paid' } });
    const seconds = receivedAt.getTime() / 1000;
    const headers = {
      'x-delivery': 'dlv_1',
      'x-timestamp': String(seconds),
      'x-signature': createHmac('sha256', 'intercom-client-secret').update(`${seconds}.${body}`).digest('base64'),
    };
    expect((await adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt })).events[0]).toMatchObject({
      id: 'dlv_1',
      type: 'invoice.paid',
      occurredAt: receivedAt.toISOString(),
    });
    await expect(adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt: new Date(receivedAt.getTime() + 61_000) })).rejects.toThrow(
      /x-timestamp is outside the 60 s tolerance/,
    );
    await expect(adapter.verify({ rawBody: Buffer.from(body), headers: { ...headers, 'x-timestamp': String(seconds + 1) }, receivedAt })).rejects.toThrow(
      /does not match/,
    );
  });

  it('signs {url}{body} with the configured URL', async () => {
    const adapter = createAdapter(
      hmacSource(`    url: https://hooks.example.com/webhooks/intercom
    signature: { header: X-Sig, signed: "{url}{body}" }
    id: { pointer: /id }
    type: { pointer: /topic }
`)(),
    );
    const headers = {
      'x-sig': createHmac('sha256', 'intercom-client-secret').update(`https://hooks.example.com/webhooks/intercom${notification}`).digest('hex'),
    };
    expect((await adapter.verify({ rawBody: Buffer.from(notification), headers, receivedAt })).events[0]!.type).toBe('conversation.user.created');
  });

  it.each([
    ['no signature block', '    id: { pointer: /id }\n    type: { pointer: /topic }\n', /declares "signature"/],
    [
      'a misspelt setting',
      '    signature: { header: X-Sig, algoritm: sha1 }\n    id: { pointer: /id }\n    type: { pointer: /topic }\n',
      /"signature.algoritm" is not a setting/,
    ],
    [
      'an unknown algorithm',
      '    signature: { header: X-Sig, algorithm: md5 }\n    id: { pointer: /id }\n    type: { pointer: /topic }\n',
      /algorithm" is one of sha1, sha256, sha512/,
    ],
    [
      '{timestamp} without its header',
      '    signature: { header: X-Sig, signed: "{timestamp}.{body}" }\n    id: { pointer: /id }\n    type: { pointer: /topic }\n',
      /has \{timestamp\} exactly when/,
    ],
    [
      '{url} without a url',
      '    signature: { header: X-Sig, signed: "{url}{body}" }\n    id: { pointer: /id }\n    type: { pointer: /topic }\n',
      /set "url" or "urlEnv"/,
    ],
    [
      'an ID that is neither a header nor a pointer',
      '    signature: { header: X-Sig }\n    id: id\n    type: { pointer: /topic }\n',
      /"id" is \{ header: <name> \} or \{ pointer/,
    ],
    [
      'an ID from a header the signature does not cover',
      '    signature: { header: X-Sig }\n    id: { header: X-Request-Id }\n    type: { pointer: /topic }\n',
      /"id" comes from a header the signature does not cover; .*"unsignedHeadersOk: true"/,
    ],
    [
      'an ID and a type from headers',
      '    signature: { header: X-Sig }\n    id: { header: X-Request-Id }\n    type: { header: X-Topic }\n',
      /"id" and "type" come from a header/,
    ],
    [
      'unsignedHeadersOk that is not true or false',
      '    signature: { header: X-Sig }\n    id: { header: X-Request-Id }\n    type: { pointer: /topic }\n    unsignedHeadersOk: "yes"\n',
      /"unsignedHeadersOk" is true or false/,
    ],
  ])('stops the receiver with one line for %s', (_case, declaration, message) => {
    expect(hmacSource(declaration)).toThrow(message);
  });
});
