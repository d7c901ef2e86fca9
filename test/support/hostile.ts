import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { ProviderKind } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import type { SourceConfig } from '../../src/providers/source';
import { KIB, MAX_BATCH_ITEMS, MAX_FORM_FIELDS, MAX_SIGNATURE_ENTRIES } from '../../src/providers/limits';
import type { Delivery } from '../../src/providers/types';
import { ed25519KeyPair } from './signing';

/**
 * The worst deliveries someone with no secret can build within the header and body limits, per
 * provider kind: what the cost test counts (test/unit/providers/cost.test.ts), the fuzz suite
 * sends, and `npm run bench` times against a valid delivery of the same kind.
 */

/** A hostile delivery's headers as a request sends them: JSON unless they say otherwise (each is one string here). */
export function requestHeaders(delivery: Pick<Delivery, 'headers'>): Record<string, string> {
  return { 'content-type': 'application/json', ...(delivery.headers as Record<string, string>) };
}

/** When the hostile deliveries are received: their timestamps are this time, so only their signatures fail. */
export const HOSTILE_RECEIVED_AT = new Date('2026-12-01T10:00:00Z');
const now = String(Math.floor(HOSTILE_RECEIVED_AT.getTime() / 1000));
/** Node's limit on all of a request's headers is 16 KiB; one header of 14 KiB fits under it. */
const HEADER_BYTES = 14 * 1024;
export const MIB = 1024 * 1024;

/** Fills a header with `entry` repeated, after `head`, up to HEADER_BYTES. */
const repeated = (head: string, entry: string, separator: string) =>
  head + Array.from({ length: Math.floor((HEADER_BYTES - head.length) / (entry.length + separator.length)) }, () => entry).join(separator);
const json = (bytes: number) => Buffer.from(JSON.stringify({ id: 'evt_hostile', type: 'hostile', data: { padding: 'x'.repeat(bytes) } }));
const hex64 = '0'.repeat(64);
const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

/** The worst deliveries of each kind we ship, by what they try to multiply. */
export const HOSTILE: Partial<Record<ProviderKind, () => Array<{ what: string; delivery: Omit<Delivery, 'receivedAt'> }>>> = {
  [ProviderKind.STRIPE]: () => [
    {
      what: 'a MiB body and a header full of v1 entries',
      delivery: { rawBody: json(MIB), headers: { 'stripe-signature': repeated(`t=${now}`, `,v1=${hex64}`, '') } },
    },
  ],
  [ProviderKind.GITHUB]: () => [
    {
      what: 'a MiB body, a wrong signature',
      delivery: {
        rawBody: json(MIB),
        headers: { 'x-hub-signature-256': `sha256=${hex64}`, 'x-github-delivery': 'd', 'x-github-event': 'ping', 'content-type': 'application/json' },
      },
    },
  ],
  [ProviderKind.STANDARD_WEBHOOKS]: () => standardHostile('webhook'),
  [ProviderKind.SVIX]: () => standardHostile('svix'),
  [ProviderKind.SHOPIFY]: () => [
    {
      what: 'a MiB body, a wrong HMAC',
      delivery: {
        rawBody: json(MIB),
        headers: {
          'x-shopify-hmac-sha256': base64Of(32),
          'x-shopify-topic': 'orders/paid',
          'x-shopify-event-id': 'e',
          'x-shopify-webhook-id': 'w',
          'x-shopify-shop-domain': 'a.myshopify.com',
        },
      },
    },
  ],
  [ProviderKind.PADDLE]: () => [
    { what: 'a header full of h1 entries', delivery: { rawBody: json(MIB), headers: { 'paddle-signature': repeated(`ts=${now}`, `;h1=${hex64}`, '') } } },
    {
      what: `${MAX_SIGNATURE_ENTRIES} h1 entries over a MiB`,
      delivery: { rawBody: json(MIB), headers: { 'paddle-signature': `ts=${now}` + `;h1=${hex64}`.repeat(MAX_SIGNATURE_ENTRIES) } },
    },
  ],
  [ProviderKind.SQUARE]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-square-hmacsha256-signature': base64Of(32) } } },
  ],
  [ProviderKind.SLACK]: () => [
    {
      what: 'a MiB body, a wrong signature',
      delivery: { rawBody: json(MIB), headers: { 'x-slack-signature': `v0=${hex64}`, 'x-slack-request-timestamp': now } },
    },
  ],
  [ProviderKind.LINEAR]: () => [
    {
      what: 'a MiB body, a wrong signature',
      delivery: { rawBody: json(MIB), headers: { 'linear-signature': hex64, 'linear-delivery': 'd', 'linear-event': 'Issue' } },
    },
  ],
  [ProviderKind.TWILIO]: () => [
    {
      what: 'one name repeated over 128 KiB',
      delivery: { rawBody: Buffer.from('a=&'.repeat((128 * 1024) / 3)), headers: { 'x-twilio-signature': base64Of(20) } },
    },
    {
      what: `${MAX_FORM_FIELDS} fields over a MiB`,
      delivery: {
        rawBody: Buffer.from(Array.from({ length: MAX_FORM_FIELDS }, (_, index) => `f${index}=${'x'.repeat(1000)}`).join('&')),
        headers: { 'x-twilio-signature': base64Of(20) },
      },
    },
  ],
  [ProviderKind.SENDGRID]: () => [
    {
      what: 'a MiB batch, a wrong signature',
      delivery: {
        rawBody: Buffer.from(JSON.stringify(Array.from({ length: 4000 }, () => ({ event: 'x', pad: 'y'.repeat(250) })))),
        headers: { 'x-twilio-email-event-webhook-signature': base64Of(70), 'x-twilio-email-event-webhook-timestamp': now },
      },
    },
  ],
  [ProviderKind.ADYEN]: () => [
    {
      what: 'a MiB of unsigned items',
      delivery: { rawBody: Buffer.from(`{"notificationItems":[${Array.from({ length: MAX_BATCH_ITEMS }, () => '0').join(',')}]}`), headers: {} },
    },
    {
      what: `${MAX_BATCH_ITEMS} items with wrong signatures`,
      delivery: {
        rawBody: Buffer.from(
          JSON.stringify({
            notificationItems: Array.from({ length: MAX_BATCH_ITEMS }, (_, index) => ({
              NotificationRequestItem: {
                pspReference: String(index),
                eventCode: 'AUTHORISATION',
                success: 'true',
                amount: { value: 1, currency: 'EUR' },
                merchantAccountCode: 'm',
                merchantReference: 'r'.repeat(60),
                additionalData: { hmacSignature: base64Of(32) },
              },
            })),
          }),
        ),
        headers: {},
      },
    },
    {
      what: 'more items than a batch may carry',
      delivery: { rawBody: Buffer.from(`{"notificationItems":[${Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => '0').join(',')}]}`), headers: {} },
    },
  ],
  [ProviderKind.HMAC]: () => [
    { what: 'a MiB body, a wrong signature', delivery: { rawBody: json(MIB), headers: { 'x-signature': hex64, 'x-timestamp': now } } },
  ],
};

function standardHostile(prefix: 'webhook' | 'svix') {
  const headers = (signature: string) => ({ [`${prefix}-id`]: 'msg_hostile', [`${prefix}-timestamp`]: now, [`${prefix}-signature`]: signature });
  return [
    { what: 'a header full of v1a entries', delivery: { rawBody: json(MIB), headers: headers(repeated('', `v1a,${base64Of(64)}`, ' ')) } },
    {
      what: `${MAX_SIGNATURE_ENTRIES} v1 and v1a entries over a MiB`,
      delivery: {
        rawBody: json(MIB),
        headers: headers(Array.from({ length: MAX_SIGNATURE_ENTRIES }, (_, index) => (index % 2 ? `v1a,${base64Of(64)}` : `v1,${base64Of(32)}`)).join(' ')),
      },
    },
  ];
}

/** Every kind's source, with two secrets (or keys) each, as a rotation has: the built-in ones and an hmac one. */
export function hostileSources(): SourceConfig[] {
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
 * A kind's hostile deliveries: its own, or, for a kind added since (docs/add-a-provider.md), a MiB
 * body with a wrong value in each of its signature headers, so it is tested the moment it is declared.
 */
export function hostileDeliveries(kind: ProviderKind, signatureHeaders: readonly string[]): Array<{ what: string; delivery: Omit<Delivery, 'receivedAt'> }> {
  return (
    HOSTILE[kind]?.() ?? [
      {
        what: 'a MiB body, a wrong signature',
        delivery: { rawBody: json(MIB), headers: Object.fromEntries(signatureHeaders.map((name) => [name, base64Of(32)])) },
      },
    ]
  );
}

/** A chunk of what each kind would parse, for a body of many MiB: empty fields for a form, empty items for a JSON batch, JSON for the rest. */
export function hostileFiller(kind: ProviderKind): Buffer {
  if (kind === ProviderKind.TWILIO) return Buffer.from('a&'.repeat(32 * KIB));
  if (kind === ProviderKind.ADYEN) return Buffer.from('{},'.repeat(21 * KIB));
  if (kind === ProviderKind.SENDGRID) return Buffer.from('{},'.repeat(21 * KIB));
  return Buffer.from('{"a":1},'.repeat(8 * KIB));
}

/**
 * Posts `bytes` of `chunk` repeated to a source, with or without a Content-Length, and resolves with
 * the answer's status and the bytes written before it came (with a declared length, the body is
 * written only if no answer came within 5 s: a receiver that reads before answering gets it then, and
 * `sent` says so; one that answers first is never raced by a busy machine's scheduling).
 */
export function postStreamed(
  baseUrl: string,
  source: string,
  contentType: string,
  chunk: Buffer,
  bytes: number,
  declareLength: boolean,
): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const url = new URL(`/webhooks/${source}`, baseUrl);
    const req = request(url, { method: 'POST', headers: { 'content-type': contentType, ...(declareLength && { 'content-length': String(bytes) }) } }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, sent }));
      req.destroy();
    });
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const write = () => {
      while (!answered && sent < bytes) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += part.length;
        if (!req.write(part)) return void req.once('drain', write);
      }
      if (!answered) req.end();
    };
    if (declareLength) req.flushHeaders();
    else write();
    // With a declared length, the answer comes before any of the body is sent.
    if (declareLength) setTimeout(() => (answered ? undefined : write()), 5_000).unref();
  });
}

/**
 * What answering took from the process: the time, the event loop's longest stall, and the most the
 * heap and the buffers outside it (the body's bytes) grew while it ran, sampled every 10 ms.
 */
export async function measureLoad<T>(task: () => Promise<T>): Promise<{ result: T; ms: number; maxDelayMs: number; memoryGrowthMiB: number }> {
  const used = () => {
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const before = used();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 10);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  try {
    const result = await task();
    const ms = performance.now() - started;
    peak = Math.max(peak, used());
    return { result, ms, maxDelayMs: delay.max / 1e6, memoryGrowthMiB: (peak - before) / MIB };
  } finally {
    delay.disable();
    clearInterval(sampler);
  }
}
