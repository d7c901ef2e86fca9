import crypto from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { loadReceiverConfig } from '../../../src/config';
import { MalformedEventError, SignatureVerificationError } from '../../../src/errors';
import { MAX_BATCH_ITEMS, MAX_FORM_FIELDS, MAX_SIGNATURE_ENTRIES } from '../../../src/providers/limits';
import { createAdapter } from '../../../src/providers/registry';
import type { Delivery, ProviderAdapter } from '../../../src/providers/types';
import { ProviderKind } from '../../../contracts';
import { ed25519KeyPair } from '../../support/signing';

/**
 * The door's first rule, for every provider kind: the worst delivery one can build within the
 * header and body limits, with no secret, is refused, and what it cost is counted, not timed:
 * signature computations (HMACs, ed25519 and ECDSA verifications, WebCrypto signatures) and the
 * bytes they read. Each configured secret may read the delivery once.
 */

const receivedAt = new Date('2026-12-01T10:00:00Z');
const now = String(Math.floor(receivedAt.getTime() / 1000));
/** Node's limit on all of a request's headers is 16 KiB; one header of 14 KiB fits under it. */
const HEADER_BYTES = 14 * 1024;
const MIB = 1024 * 1024;

/** Fills a header with `entry` repeated, after `head`, up to HEADER_BYTES. */
const repeated = (head: string, entry: string, separator: string) => head + Array.from({ length: Math.floor((HEADER_BYTES - head.length) / (entry.length + separator.length)) }, () => entry).join(separator);
const json = (bytes: number) => Buffer.from(JSON.stringify({ id: 'evt_hostile', type: 'hostile', data: { padding: 'x'.repeat(bytes) } }));
const hex64 = '0'.repeat(64);
const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

/** The worst deliveries of each kind, by what they try to multiply. A kind without them fails the test below. */
const HOSTILE: Record<ProviderKind, () => Array<{ what: string; delivery: Omit<Delivery, 'receivedAt'> }>> = {
  [ProviderKind.STRIPE]: () => [
    { what: 'a MiB body and a header full of v1 entries', delivery: { rawBody: json(MIB), headers: { 'stripe-signature': repeated(`t=${now}`, `,v1=${hex64}`, '') } } },
  ],
  [ProviderKind.GITHUB]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-hub-signature-256': `sha256=${hex64}`, 'x-github-delivery': 'd', 'x-github-event': 'ping', 'content-type': 'application/json' } } },
  ],
  [ProviderKind.STANDARD_WEBHOOKS]: () => standardHostile('webhook'),
  [ProviderKind.SVIX]: () => standardHostile('svix'),
  [ProviderKind.SHOPIFY]: () => [
    { what: 'a MiB body, a wrong HMAC', delivery: { rawBody: json(MIB), headers: { 'x-shopify-hmac-sha256': base64Of(32), 'x-shopify-topic': 'orders/paid', 'x-shopify-event-id': 'e', 'x-shopify-webhook-id': 'w', 'x-shopify-shop-domain': 'a.myshopify.com' } } },
  ],
  [ProviderKind.PADDLE]: () => [
    { what: 'a header full of h1 entries', delivery: { rawBody: json(MIB), headers: { 'paddle-signature': repeated(`ts=${now}`, `;h1=${hex64}`, '') } } },
    { what: `${MAX_SIGNATURE_ENTRIES} h1 entries over a MiB`, delivery: { rawBody: json(MIB), headers: { 'paddle-signature': `ts=${now}` + `;h1=${hex64}`.repeat(MAX_SIGNATURE_ENTRIES) } } },
  ],
  [ProviderKind.SQUARE]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-square-hmacsha256-signature': base64Of(32) } } },
  ],
  [ProviderKind.SLACK]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-slack-signature': `v0=${hex64}`, 'x-slack-request-timestamp': now } } },
  ],
  [ProviderKind.LINEAR]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'linear-signature': hex64, 'linear-delivery': 'd', 'linear-event': 'Issue' } } },
  ],
  [ProviderKind.TWILIO]: () => [
    { what: 'one name repeated over 128 KiB', delivery: { rawBody: Buffer.from('a=&'.repeat((128 * 1024) / 3)), headers: { 'x-twilio-signature': base64Of(20) } } },
    {
      what: `${MAX_FORM_FIELDS} fields over a MiB`,
      delivery: { rawBody: Buffer.from(Array.from({ length: MAX_FORM_FIELDS }, (_, index) => `f${index}=${'x'.repeat(1000)}`).join('&')), headers: { 'x-twilio-signature': base64Of(20) } },
    },
  ],
  [ProviderKind.SENDGRID]: () => [
    { what: 'a MiB batch, a wrong signature', delivery: { rawBody: Buffer.from(JSON.stringify(Array.from({ length: 4000 }, () => ({ event: 'x', pad: 'y'.repeat(250) })))), headers: { 'x-twilio-email-event-webhook-signature': base64Of(70), 'x-twilio-email-event-webhook-timestamp': now } } },
  ],
  [ProviderKind.ADYEN]: () => [
    { what: 'a MiB of unsigned items', delivery: { rawBody: Buffer.from(`{"notificationItems":[${Array.from({ length: MAX_BATCH_ITEMS }, () => '0').join(',')}]}`), headers: {} } },
    {
      what: `${MAX_BATCH_ITEMS} items with wrong signatures`,
      delivery: {
        rawBody: Buffer.from(JSON.stringify({ notificationItems: Array.from({ length: MAX_BATCH_ITEMS }, (_, index) => ({ NotificationRequestItem: { pspReference: String(index), eventCode: 'AUTHORISATION', success: 'true', amount: { value: 1, currency: 'EUR' }, merchantAccountCode: 'm', merchantReference: 'r'.repeat(60), additionalData: { hmacSignature: base64Of(32) } } })) })),
        headers: {},
      },
    },
    { what: 'more items than a batch may carry', delivery: { rawBody: Buffer.from(`{"notificationItems":[${Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => '0').join(',')}]}`), headers: {} } },
  ],
  [ProviderKind.HMAC]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-signature': hex64, 'x-timestamp': now } } },
  ],
};

function standardHostile(prefix: 'webhook' | 'svix') {
  const headers = (signature: string) => ({ [`${prefix}-id`]: 'msg_hostile', [`${prefix}-timestamp`]: now, [`${prefix}-signature`]: signature });
  return [
    { what: 'a header full of v1a entries', delivery: { rawBody: json(MIB), headers: headers(repeated('', `v1a,${base64Of(64)}`, ' ')) } },
    { what: `${MAX_SIGNATURE_ENTRIES} v1 and v1a entries over a MiB`, delivery: { rawBody: json(MIB), headers: headers(Array.from({ length: MAX_SIGNATURE_ENTRIES }, (_, index) => (index % 2 ? `v1a,${base64Of(64)}` : `v1,${base64Of(32)}`)).join(' ')) } },
  ];
}

/** Every kind's source, with two secrets (or keys) each, as a rotation has: the built-in ones and an hmac one. */
function sources() {
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-cost-'));
  const file = path.join(dir, 'webhooks.yaml');
  writeFileSync(
    file,
    `sources:
  - name: long-tail
    kind: hmac
    secret: [long-tail-secret-1, long-tail-secret-2]
    signature: { header: X-Signature, signed: "{timestamp}.{body}", timestampHeader: X-Timestamp }
    id: { pointer: /id }
    type: { pointer: /type }
`,
  );
  const second = (value: string) => (/^[0-9A-F]{64}$/.test(value) ? value.replace(/^.{2}/, 'AB') : value);
  const { developmentSecrets } = loadReceiverConfig({}, { development: true });
  const env: NodeJS.ProcessEnv = { WEBHOOKS_CONFIG: file };
  for (const { env: name, value } of developmentSecrets) {
    env[name] = value;
    if (!name.endsWith('_URL')) env[`${name}_PREVIOUS`] = name === 'SENDGRID_WEBHOOK_PUBLIC_KEY' ? value : second(value);
  }
  env.STANDARD_WEBHOOK_PUBLIC_KEY = ed25519KeyPair().whpk;
  env.STANDARD_WEBHOOK_PUBLIC_KEY_PREVIOUS = ed25519KeyPair().whpk;
  return loadReceiverConfig(env, { development: true }).sources;
}

/**
 * What signature work `run` does: the computations that read more than a KiB (a signature over the
 * delivery; a constant-time comparison's HMACs of two signatures do not count) and the bytes
 * every computation reads.
 */
async function counted(run: () => Promise<unknown>) {
  const work = { computations: 0, bytes: 0 };
  const size = (data: unknown, encoding?: BufferEncoding) =>
    typeof data === 'string' ? Buffer.byteLength(data, encoding) : ArrayBuffer.isView(data) ? data.byteLength : data instanceof ArrayBuffer ? data.byteLength : 0;
  const read = (bytes: number) => {
    work.bytes += bytes;
    if (bytes > 1024) work.computations++;
  };
  const { createHmac, verify } = crypto;
  const standardSign = Webhook.prototype.sign;
  const subtleSign = crypto.webcrypto.subtle.sign.bind(crypto.webcrypto.subtle);
  const spies = [
    jest.spyOn(crypto, 'createHmac').mockImplementation((...args: Parameters<typeof crypto.createHmac>) => {
      const hmac = createHmac(...args);
      const update = hmac.update.bind(hmac);
      let bytes = 0;
      hmac.update = ((data: crypto.BinaryLike, encoding?: BufferEncoding) => {
        bytes += size(data, encoding);
        return update(data as string, encoding as BufferEncoding);
      }) as typeof hmac.update;
      const digest = hmac.digest.bind(hmac);
      hmac.digest = ((encoding?: crypto.BinaryToTextEncoding) => {
        read(bytes);
        return encoding ? digest(encoding) : digest();
      }) as typeof hmac.digest;
      return hmac;
    }),
    jest.spyOn(crypto, 'verify').mockImplementation(((algorithm: string | null, data: NodeJS.ArrayBufferView, key: crypto.KeyLike, signature: NodeJS.ArrayBufferView) => {
      read(size(data));
      return verify(algorithm, data, key, signature);
    }) as typeof crypto.verify),
    jest.spyOn(crypto.webcrypto.subtle, 'sign').mockImplementation(async (algorithm, key, data) => {
      read(size(data));
      return subtleSign(algorithm, key, data);
    }),
    // The standardwebhooks package computes its HMAC in JavaScript (@stablelib), not in node:crypto.
    jest.spyOn(Webhook.prototype, 'sign').mockImplementation(function (this: Webhook, id: string, timestamp: Date, payload: string | Buffer) {
      read(size(payload));
      return standardSign.call(this, id, timestamp, payload);
    }),
  ];
  try {
    const outcome = await run().then(
      () => 'accepted',
      (error: Error) => error,
    );
    return { ...work, outcome };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const configured = sources();
const adapters = configured.map((config) => ({ config, adapter: createAdapter(config) as ProviderAdapter }));

describe('a refused delivery costs one signature computation per configured secret, reading it once', () => {
  it('has hostile deliveries for every provider kind', () => {
    expect(new Set(adapters.map(({ adapter }) => adapter.kind))).toEqual(new Set(Object.values(ProviderKind)));
  });

  const cases = adapters.flatMap(({ config, adapter }) => HOSTILE[adapter.kind]().map(({ what, delivery }) => ({ source: config.name, kind: adapter.kind, what, delivery, adapter, keys: config.secrets.length + config.publicKeys.length })));
  it.each(cases.map((entry) => [`${entry.source}: ${entry.what}`, entry] as const))('%s', async (_title, { adapter, delivery, keys }) => {
    const { computations, bytes, outcome } = await counted(() => adapter.verify({ ...delivery, receivedAt }));
    expect(outcome).toBeInstanceOf(Error);
    // Each case makes the adapter compute at least one signature, or refuses it before any: the counting works.
    expect(computations > 0 || /at most/.test((outcome as Error).message) || /signed with a configured/.test((outcome as Error).message)).toBe(true);
    expect([SignatureVerificationError, MalformedEventError].some((type) => outcome instanceof type)).toBe(true);
    // What a signature covers besides the body and headers (a URL, a version prefix) is small.
    const size = delivery.rawBody.length + JSON.stringify(delivery.headers).length + 256;
    if (adapter.batch && adapter.kind === ProviderKind.ADYEN) {
      // Adyen signs each item, not the delivery: an HMAC per item and key, over that item's fields only.
      expect(computations).toBeLessThanOrEqual(MAX_BATCH_ITEMS * keys);
    } else {
      // The ed25519 of Standard Webhooks' v1a cannot be computed once and compared: one verification per offered entry and key, entries capped.
      const perKey = adapter.kind === ProviderKind.STANDARD_WEBHOOKS || adapter.kind === ProviderKind.SVIX ? MAX_SIGNATURE_ENTRIES : 1;
      expect(computations).toBeLessThanOrEqual(perKey * keys);
    }
    expect(bytes).toBeLessThanOrEqual(size * keys * (adapter.kind === ProviderKind.STANDARD_WEBHOOKS || adapter.kind === ProviderKind.SVIX ? MAX_SIGNATURE_ENTRIES : 1));
  });

  it('refuses too many signature entries, form fields and batch items before computing any signature', async () => {
    const byKind = (kind: ProviderKind) => adapters.find(({ adapter }) => adapter.kind === kind)!.adapter;
    for (const [kind, what] of [
      [ProviderKind.PADDLE, 'a header full of h1 entries'],
      [ProviderKind.STANDARD_WEBHOOKS, 'a header full of v1a entries'],
      [ProviderKind.TWILIO, 'one name repeated over 128 KiB'],
      [ProviderKind.ADYEN, 'more items than a batch may carry'],
    ] as const) {
      const { delivery } = HOSTILE[kind]().find((entry) => entry.what === what)!;
      const { computations, outcome } = await counted(() => byKind(kind).verify({ ...delivery, receivedAt }));
      expect({ kind, computations, refused: outcome instanceof Error }).toEqual({ kind, computations: 0, refused: true });
    }
  });
});
