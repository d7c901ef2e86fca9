import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ProviderKind } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import { silentLogger } from '../../src/core/logger';
import type { Delivery, ProviderAdapter } from '../../src/providers/types';
import { HOSTILE_RECEIVED_AT, hostileDeliveries, hostileFiller, hostileSources, measureLoad, MIB, postStreamed, requestHeaders } from '../support/hostile';
import { RecordingStarter } from '../support/recording-starter';
import { built } from './production-build';
import { benchSize, SHORT } from './settings';
import {
  adyenBody,
  adyenItem,
  CATALOG_SECRETS,
  CATALOG_SECRETS_ENV,
  githubHeaders,
  linearHeaders,
  paddleHeaders,
  SECRETS,
  SECRETS_ENV,
  SENDGRID_KEYS,
  shopifyHeaders,
  slackHeaders,
  squareHeaders,
  standardHeaders,
  stripeHeaders,
  svixHeaders,
  twilioRequest,
} from '../support/signing';

const { createAdapter, SourceRegistry } = built('./src/providers/registry.js') as typeof import('../../src/providers/registry');
const { createApp } = built('./src/http/app.js') as typeof import('../../src/http/app');

/** What a refused delivery may hold the event loop for, per MiB of it (issue: under 50 ms). */
export const REFUSED_MS_PER_MIB_TARGET = 50;

export interface KindCost {
  kind: ProviderKind;
  /** The costliest refused delivery of the kind (test/support/hostile.ts) and its ms per MiB. */
  worst: { what: string; msPerMiB: number };
  /** A valid delivery of a MiB, signed with the kind's first secret; null for a kind this bench cannot sign yet. */
  validMsPerMiB: number | null;
}

/**
 * Each kind's worst refused delivery, timed (the median of 5 verifications) beside a valid MiB of
 * the same kind; and `/healthz` latency at rest and while 8 of the costliest refused deliveries are
 * answered at once, through the receiver's own HTTP server.
 */
export async function measureHostileCosts(): Promise<{ kinds: KindCost[]; healthz: { idleP99Ms: number; underAttackP99Ms: number; attack: string } }> {
  const hostile = new Map(hostileSources().map((config) => [config.kind, createAdapter(config) as ProviderAdapter]));
  const valid = new Map(validSources().map((config) => [config.kind, createAdapter(config) as ProviderAdapter]));
  const kinds: KindCost[] = [];
  for (const kind of Object.values(ProviderKind)) {
    const costs = [];
    for (const { what, delivery } of hostileDeliveries(kind, hostile.get(kind)!.signatureHeaders))
      costs.push({ what, msPerMiB: perMiB(delivery, await medianMs(hostile.get(kind)!, delivery, HOSTILE_RECEIVED_AT, 'refused')) });
    const worst = costs.reduce((a, b) => (b.msPerMiB > a.msPerMiB ? b : a));
    const signed = await validDelivery(kind);
    const validMsPerMiB = signed ? perMiB(signed, await medianMs(valid.get(kind)!, signed, NOW, 'accepted')) : null;
    kinds.push({ kind, worst: { what: worst.what, msPerMiB: worst.msPerMiB }, validMsPerMiB });
  }
  const costliest = kinds.reduce((a, b) => (b.worst.msPerMiB > a.worst.msPerMiB ? b : a));
  return { kinds, healthz: await healthzUnderAttack(costliest) };
}

/** A 25 MiB body refused by one kind's source: how long its 413 took, and what it held meanwhile. */
export interface LargeBodyCost {
  kind: ProviderKind;
  limitBytes: number;
  /** From the first byte sent to the answer. */
  ms: number;
  /** The event loop's longest stall meanwhile (the test's bound: 100 ms). */
  maxDelayMs: number;
  /** The most the heap and buffers grew (the test's bound: 64 MiB). */
  memoryGrowthMiB: number;
}

/**
 * Each kind's source sent 25 MiB of what it would parse (empty form fields, empty batch items, JSON)
 * with no Content-Length, so the limit is enforced while reading (a declared one is refused
 * unread), through the real app on its own server; a kind whose limit is 25 MiB gets one byte more.
 */
export async function measureLargeBodies(): Promise<LargeBodyCost[]> {
  const sources = hostileSources();
  const registry = new SourceRegistry(sources);
  const app = createApp({ sources: registry, starter: new RecordingStarter(), maxBodyBytes: 25 * MIB, logger: silentLogger, now: () => HOSTILE_RECEIVED_AT });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const costs: LargeBodyCost[] = [];
  try {
    for (const config of sources) {
      const { adapter, maxBodyBytes } = registry.get(config.name);
      const bytes = Math.max(25 * MIB, maxBodyBytes + 1);
      const { result, ms, maxDelayMs, memoryGrowthMiB } = await measureLoad(() =>
        postStreamed(url, config.name, adapter.contentTypes[0]!, hostileFiller(config.kind), bytes, false),
      );
      if (result.status !== 413) throw new Error(`${config.kind}: a ${bytes}-byte body was answered ${result.status}, not 413`);
      costs.push({ kind: config.kind, limitBytes: maxBodyBytes, ms, maxDelayMs, memoryGrowthMiB });
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return costs;
}

const NOW = new Date('2026-12-01T10:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const perMiB = (delivery: Omit<Delivery, 'receivedAt'>, ms: number) => ms / (delivery.rawBody.length / MIB);

/** Verifications timed per delivery, after three untimed ones (one of each in a short run). */
const RUNS = benchSize('HOSTILE_RUNS', 5, 1);
const WARM_UPS = SHORT ? 1 : 3;

/** The median of RUNS verifications, from the call to its answer (WebCrypto's run off the event loop, the rest on it). */
async function medianMs(adapter: ProviderAdapter, delivery: Omit<Delivery, 'receivedAt'>, receivedAt: Date, expect: 'accepted' | 'refused'): Promise<number> {
  const times: number[] = [];
  // Runs first, so the code is compiled as it is in a receiver that has been up a while.
  for (let run = -WARM_UPS; run < RUNS; run++) {
    const started = performance.now();
    const outcome = await Promise.resolve(adapter.verify({ ...delivery, receivedAt })).then(
      () => 'accepted',
      () => 'refused',
    );
    if (run >= 0) times.push(performance.now() - started);
    if (outcome !== expect) throw new Error(`${adapter.kind}: a delivery the bench expected ${expect} was ${outcome}`);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

/** Every kind's source with the tests' secrets, and an hmac source. */
function validSources() {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-bench-hmac-')), 'webhooks.yaml');
  writeFileSync(
    file,
    `sources:
  - name: long-tail
    kind: hmac
    secret: bench-hmac-secret
    signature: { header: X-Signature, signed: "{timestamp}.{body}", timestampHeader: X-Timestamp }
    id: { pointer: /id }
    type: { pointer: /type }
`,
  );
  return loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV, WEBHOOKS_CONFIG: file }).sources;
}

/** A valid delivery of about a MiB for the kind, signed as the provider signs. */
async function validDelivery(kind: ProviderKind): Promise<Omit<Delivery, 'receivedAt'> | undefined> {
  const padding = 'x'.repeat(MIB);
  const of = (body: string, headers: Record<string, string>) => ({ rawBody: Buffer.from(body), headers });
  const id = 'evt_bench_valid';
  switch (kind) {
    case ProviderKind.STRIPE: {
      const body = JSON.stringify({ id, object: 'event', created: NOW_SECONDS, type: 'invoice.paid', data: { object: { padding } }, livemode: false });
      return of(body, stripeHeaders(body, SECRETS.stripe, NOW_SECONDS));
    }
    case ProviderKind.GITHUB: {
      const body = JSON.stringify({ zen: padding });
      return of(body, await githubHeaders(body, SECRETS.github, { delivery: id, event: 'ping' }));
    }
    case ProviderKind.STANDARD_WEBHOOKS: {
      const body = JSON.stringify({ type: 'order.created', timestamp: NOW.toISOString(), data: { padding } });
      return of(body, standardHeaders(body, SECRETS.standard, { id, timestamp: NOW }));
    }
    case ProviderKind.SVIX: {
      const body = JSON.stringify({ type: 'user.created', timestamp: NOW.toISOString(), data: { padding } });
      return of(body, svixHeaders(body, CATALOG_SECRETS.svix, { id, timestamp: NOW }));
    }
    case ProviderKind.SHOPIFY: {
      const body = JSON.stringify({ id: 1, padding });
      return of(body, shopifyHeaders(body, CATALOG_SECRETS.shopify, { eventId: id }));
    }
    case ProviderKind.PADDLE: {
      const body = JSON.stringify({ event_id: id, event_type: 'transaction.completed', occurred_at: NOW.toISOString(), data: { padding } });
      return of(body, paddleHeaders(body, [CATALOG_SECRETS.paddle], NOW_SECONDS));
    }
    case ProviderKind.SQUARE: {
      const body = JSON.stringify({
        merchant_id: 'M1',
        type: 'payment.updated',
        event_id: id,
        created_at: NOW.toISOString(),
        data: { type: 'payment', id: 'p1', object: { padding } },
      });
      return of(body, squareHeaders(body, CATALOG_SECRETS.square, CATALOG_SECRETS.squareUrl));
    }
    case ProviderKind.SLACK: {
      const body = JSON.stringify({
        team_id: 'T1',
        type: 'event_callback',
        event_id: id,
        event_time: NOW_SECONDS,
        event: { type: 'app_mention', text: padding },
      });
      return of(body, slackHeaders(body, CATALOG_SECRETS.slack, NOW_SECONDS));
    }
    case ProviderKind.LINEAR: {
      const body = JSON.stringify({ action: 'create', type: 'Issue', data: { padding }, webhookTimestamp: NOW.getTime() });
      return of(body, linearHeaders(body, CATALOG_SECRETS.linear, id));
    }
    case ProviderKind.TWILIO: {
      const { body, headers } = twilioRequest(
        { AccountSid: 'AC1', MessageSid: 'SM1', MessageStatus: 'delivered', Body: padding },
        CATALOG_SECRETS.twilio,
        CATALOG_SECRETS.twilioUrl,
        id,
      );
      return of(body, headers);
    }
    case ProviderKind.SENDGRID: {
      const body = JSON.stringify([{ email: 'ada@example.com', timestamp: NOW_SECONDS, event: 'delivered', sg_event_id: id, padding }]);
      return of(body, SENDGRID_KEYS.headers(body, NOW_SECONDS));
    }
    case ProviderKind.ADYEN: {
      const item = adyenItem(CATALOG_SECRETS.adyen, { pspReference: id, eventCode: 'AUTHORISATION', additionalData: { padding } });
      return of(adyenBody([item]), { 'content-type': 'application/json' });
    }
    case ProviderKind.HMAC: {
      const body = JSON.stringify({ id, type: 'thing.happened', padding });
      const signature = createHmac('sha256', 'bench-hmac-secret').update(`${NOW_SECONDS}.${body}`).digest('hex');
      return of(body, { 'x-signature': signature, 'x-timestamp': String(NOW_SECONDS) });
    }
    default:
      return undefined;
  }
}

/** `/healthz` requests timed at rest and under attack; a short run's 20 show the measure works without 200 under attack. */
const HEALTHZ_REQUESTS = benchSize('HEALTHZ_REQUESTS', 200, 20);

/**
 * `/healthz` p99 (of HEALTHZ_REQUESTS sequential requests) with nothing else to do, then while 8 clients send the
 * costliest kind's worst refused delivery in a loop. The receiver is the real app on its own server.
 */
async function healthzUnderAttack(costliest: KindCost): Promise<{ idleP99Ms: number; underAttackP99Ms: number; attack: string }> {
  const sources = hostileSources();
  const source = sources.find((config) => config.kind === costliest.kind)!;
  const delivery = hostileDeliveries(costliest.kind, createAdapter(source).signatureHeaders).find((entry) => entry.what === costliest.worst.what)!.delivery;
  const app = createApp({
    sources: new SourceRegistry(sources),
    starter: new RecordingStarter(),
    maxBodyBytes: 4 * MIB,
    logger: silentLogger,
    now: () => HOSTILE_RECEIVED_AT,
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const p99 = async () => {
    const times: number[] = [];
    for (let index = 0; index < HEALTHZ_REQUESTS; index++) {
      const started = performance.now();
      await (await fetch(`${url}/healthz`)).arrayBuffer();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length * 0.99)]!;
  };
  try {
    const idleP99Ms = await p99();
    let attacking = true;
    const attackers = Array.from({ length: 8 }, async () => {
      while (attacking) {
        const response = await fetch(`${url}/webhooks/${source.name}`, {
          method: 'POST',
          headers: requestHeaders(delivery),
          body: delivery.rawBody,
        });
        await response.arrayBuffer();
      }
    });
    const underAttackP99Ms = await p99();
    attacking = false;
    await Promise.all(attackers);
    return { idleP99Ms, underAttackP99Ms, attack: `${costliest.kind}: ${costliest.worst.what}` };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
