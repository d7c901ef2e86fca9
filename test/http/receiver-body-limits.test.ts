import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ProviderKind } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import type { Database } from '../../src/db/database';
import { silentLogger } from '../../src/logger';
import { PROVIDERS } from '../../src/providers/index';
import { KIB, MIB } from '../../src/providers/limits';
import { startReceiver, type RunningReceiver } from '../../src/receiver';
import { lazyClient } from '../../src/temporal/connection';
import { CATALOG_SECRETS_ENV, SECRETS_ENV } from '../support/signing';

/**
 * Each kind's body limit (`defineProvider`'s `maxBodyBytes`), enforced before a byte is read when
 * the length is declared and while reading when it is not: a 25 MiB body of what each kind parses
 * (empty form fields, empty batch items, JSON) is refused 413 without holding the event loop or
 * the heap. No request here reaches Temporal or the database.
 */
const client = lazyClient({ namespace: 'default', connectionOptions: { address: '127.0.0.1:1' } });
const unreachableDatabase: Database = {
  kind: 'postgresql',
  query: () => Promise.reject(new Error('no request here reaches the database')),
  transaction: () => Promise.reject(new Error('no request here reaches the database')),
  close: async () => undefined,
};

const HOSTILE_BYTES = 25 * MIB;

let receiver: RunningReceiver;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-limits-'));
  const file = path.join(dir, 'webhooks.yaml');
  writeFileSync(
    file,
    `sources:
  - name: long-tail
    kind: hmac
    secret: long-tail-secret
    signature: { header: X-Signature }
    id: { pointer: /id }
    type: { pointer: /type }
  - name: small-tail
    kind: hmac
    secret: small-tail-secret
    signature: { header: X-Signature }
    id: { pointer: /id }
    type: { pointer: /type }
    maxBodyBytes: 64KiB
`,
  );
  const config = loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV, WEBHOOKS_CONFIG: file, PORT: '0' }, { development: true });
  receiver = await startReceiver(config, client, silentLogger, unreachableDatabase);
});
afterAll(() => receiver.close());

/** Each kind's built-in source (and the hmac kind's from WEBHOOKS_CONFIG), with its limit and media type. */
const sources = PROVIDERS.map((provider) => ({
  kind: provider.kind,
  name: provider.builtIn?.name ?? 'long-tail',
  limit: provider.maxBodyBytes,
  contentType: provider.kind === ProviderKind.TWILIO ? 'application/x-www-form-urlencoded' : 'application/json',
}));

/** What each kind would parse, repeated: empty fields for a form, empty items for a JSON batch. */
function filler(kind: ProviderKind): Buffer {
  if (kind === ProviderKind.TWILIO) return Buffer.from('a&'.repeat(32 * KIB));
  if (kind === ProviderKind.ADYEN) return Buffer.from('{},'.repeat(21 * KIB));
  if (kind === ProviderKind.SENDGRID) return Buffer.from('{},'.repeat(21 * KIB));
  return Buffer.from('{"a":1},'.repeat(8 * KIB));
}

/**
 * Posts `bytes` of `chunk` repeated to a source, with or without a Content-Length, and resolves with
 * the answer's status and the bytes written before it came (with a declared length, the body is
 * written only if no answer came within 200 ms).
 */
function post(source: string, contentType: string, chunk: Buffer, bytes: number, declareLength: boolean): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const url = new URL(`/webhooks/${source}`, receiver.url);
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
    if (declareLength) setTimeout(() => (answered ? undefined : write()), 200);
  });
}

/**
 * What answering took from the process: the event loop's longest stall, and the most the heap and
 * the buffers outside it (the body's bytes) grew while it ran, sampled every 10 ms.
 */
async function measured<T>(task: () => Promise<T>): Promise<{ result: T; maxDelayMs: number; memoryGrowthMiB: number }> {
  const used = () => {
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const before = used();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 10);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    const result = await task();
    peak = Math.max(peak, used());
    return { result, maxDelayMs: delay.max / 1e6, memoryGrowthMiB: (peak - before) / MIB };
  } finally {
    delay.disable();
    clearInterval(sampler);
  }
}

it('declares a limit per kind: forms small, batches about a MiB, GitHub 25 MiB', () => {
  const limitOf = (kind: ProviderKind) => sources.find((source) => source.kind === kind)!.limit;
  expect(limitOf(ProviderKind.TWILIO)).toBeLessThanOrEqual(64 * KIB);
  expect(limitOf(ProviderKind.SLACK)).toBeLessThanOrEqual(MIB);
  expect(limitOf(ProviderKind.ADYEN)).toBe(MIB);
  expect(limitOf(ProviderKind.SENDGRID)).toBe(MIB);
  expect(limitOf(ProviderKind.GITHUB)).toBe(25 * MIB);
});

it.each(sources.map((source) => [source.kind, source] as const))('%s: a body declared over its limit is refused 413 before a byte of it is read', async (_kind, { name, limit, contentType }) => {
  const { status, sent } = await post(name, contentType, Buffer.alloc(64 * KIB, 'x'), limit + 1, true);
  expect(status).toBe(413);
  expect(sent).toBe(0);
});

it.each(sources.map((source) => [source.kind, source] as const))(
  '%s: 25 MiB sent without a length is refused 413 at its limit, the event loop never held 100 ms, the heap grown under 64 MiB',
  async (kind, { name, limit, contentType }) => {
    // 25 MiB, which MAX_BODY_BYTES allows; one byte over the limit for a kind that allows 25 MiB itself.
    const bytes = limit < HOSTILE_BYTES ? HOSTILE_BYTES : limit + 1;
    const { result, maxDelayMs, memoryGrowthMiB } = await measured(() => post(name, contentType, filler(kind), bytes, false));
    expect(result.status).toBe(413);
    expect(maxDelayMs).toBeLessThan(100);
    expect(memoryGrowthMiB).toBeLessThan(64);
  },
);

it("takes a source's own maxBodyBytes from WEBHOOKS_CONFIG over its kind's", async () => {
  expect((await post('small-tail', 'application/json', Buffer.alloc(64 * KIB, 'x'), 64 * KIB + 1, true)).status).toBe(413);
  expect((await post('long-tail', 'application/json', Buffer.alloc(64 * KIB, 'x'), 64 * KIB + 1, true)).status).not.toBe(413);
});

it('caps every source at MAX_BODY_BYTES', async () => {
  const capped = await startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', MAX_BODY_BYTES: '1000' }, { development: true }), client, silentLogger, unreachableDatabase);
  try {
    const response = await fetch(`${capped.url}/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(1001) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ maxBodyBytes: 1000 });
  } finally {
    await capped.close();
  }
});
