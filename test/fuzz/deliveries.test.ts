import { isDeepStrictEqual } from 'node:util';
import { request, type Server } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { FLOWS } from '../../src/flows';
import { loadReceiverConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { silentLogger } from '../../src/core/logger';
import { createAdapter, SourceRegistry } from '../../src/providers/registry';
import { HOSTILE_RECEIVED_AT, hostileDeliveries, hostileSources, MIB, requestHeaders } from '../support/hostile';
import { RecordingStarter } from '../support/recording-starter';
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

/**
 * Generated deliveries for every provider kind, signed by each provider's own library and then
 * perhaps mutated (body, signature, signed and unsigned headers, content type), with hostile event
 * IDs and types, or random bytes. Against the real receiver with an engine-like fake starter:
 *  - nothing gets a 5xx;
 *  - nothing is accepted unless its body and signed headers are exactly what was signed;
 *  - every accepted delivery made exactly one start call, for the ID and payload that were signed,
 *    and each event ID started one workflow.
 */
const RUNS = 10_000;
const MAX_BODY_BYTES = 16 * 1024;
const NOW = new Date('2026-12-01T10:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;

const PROVIDERS = ['stripe', 'github', 'standard', 'svix', 'shopify', 'paddle', 'square', 'slack', 'linear', 'twilio', 'sendgrid', 'adyen'] as const;
type Provider = (typeof PROVIDERS)[number];

/** What was signed, so an accepted delivery can be checked against it. */
interface Signed {
  body: Buffer;
  /** Headers the signature covers, by lower-case name, as signed. */
  signedHeaders: Record<string, string>;
  /** The event ID an accepted delivery must carry, given the headers it was sent with (some providers sign no ID header). */
  id: (headers: Record<string, string>) => unknown;
  /** The payload the event's workflow must be started with. */
  payload: unknown;
}

interface Delivery {
  provider: Provider;
  body: Buffer;
  headers: Record<string, string>;
  signed: Signed | null;
  mutation: string;
  /** A Content-Length sent instead of the body's own (over MAX_BODY_BYTES). */
  declaredLength?: number;
}

// Text a provider could put in a header: Node sends and parses header values as latin1.
const headerText = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code < 0x7f || code > 0x9f)
      .map((code) => String.fromCharCode(code)),
    ...constraints,
  });

const hostileNames = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'durable-webhooks:subscription:sub_1',
  'durable-webhooks:msg_1',
  '',
  ' ',
  'a b',
  '..',
  '%00',
);
const eventIds = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z]{2,4}_[A-Za-z0-9]{4,6}$/) },
  { weight: 1, arbitrary: hostileNames },
  { weight: 1, arbitrary: headerText({ minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 185, max: 1_200 }).map((length) => `id_${'x'.repeat(length)}`) },
);
const eventTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('checkout.session.completed', 'order.created', 'issues', 'ping', 'customer.subscription.updated', 'a.b') },
  { weight: 1, arbitrary: hostileNames },
  { weight: 1, arbitrary: headerText({ minLength: 1, maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 120, max: 400 }).map((length) => `t.${'y'.repeat(length)}`) },
);
const payloads = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

/** A header as the receiver reads it: HTTP strips a value's surrounding spaces and tabs. */
const received = (value: string | undefined) => value?.replace(/^[\t ]+|[\t ]+$/g, '');

async function sign(
  provider: Provider,
  id: string,
  type: string,
  data: Record<string, unknown>,
  idNotString: unknown,
): Promise<{ body: string; headers: Record<string, string>; signed: Omit<Signed, 'body'> }> {
  const json = (body: string) => ({ payload: JSON.parse(body) as unknown });
  switch (provider) {
    case 'stripe': {
      const eventId = idNotString ?? id;
      const body = JSON.stringify({ id: eventId, object: 'event', created: NOW_SECONDS, type, data: { object: data }, livemode: false });
      return { body, headers: stripeHeaders(body, SECRETS.stripe, NOW_SECONDS), signed: { signedHeaders: {}, id: () => eventId, ...json(body) } };
    }
    case 'github': {
      const [event, action] = type.split(/\.(.*)/s);
      const body = JSON.stringify(action ? { action, ...data } : data);
      // GitHub signs the body only: its delivery ID and event name are sent, not signed.
      return {
        body,
        headers: await githubHeaders(body, SECRETS.github, { delivery: id, event: event || type }),
        signed: { signedHeaders: {}, id: (headers) => received(headers['x-github-delivery']), ...json(body) },
      };
    }
    case 'standard':
    case 'svix': {
      const body = JSON.stringify({ type, timestamp: NOW.toISOString(), data });
      const prefix = provider === 'svix' ? 'svix' : 'webhook';
      const headers =
        provider === 'svix' ? svixHeaders(body, CATALOG_SECRETS.svix, { id, timestamp: NOW }) : standardHeaders(body, SECRETS.standard, { id, timestamp: NOW });
      return {
        body,
        headers,
        signed: {
          signedHeaders: { [`${prefix}-id`]: headers[`${prefix}-id`]!, [`${prefix}-timestamp`]: headers[`${prefix}-timestamp`]! },
          id: () => id,
          ...json(body),
        },
      };
    }
    case 'shopify': {
      const body = JSON.stringify(data);
      // Shopify signs the body only; the event ID falls back to the webhook ID.
      const headers = shopifyHeaders(body, CATALOG_SECRETS.shopify, { eventId: id, topic: type });
      return {
        body,
        headers,
        signed: { signedHeaders: {}, id: (sent) => received(sent['x-shopify-event-id']) || received(sent['x-shopify-webhook-id']), ...json(body) },
      };
    }
    case 'paddle': {
      const body = JSON.stringify({ event_id: id, event_type: type, occurred_at: NOW.toISOString(), data });
      return { body, headers: paddleHeaders(body, [CATALOG_SECRETS.paddle], NOW_SECONDS), signed: { signedHeaders: {}, id: () => id, ...json(body) } };
    }
    case 'square': {
      const body = JSON.stringify({ merchant_id: 'M1', type, event_id: id, created_at: NOW.toISOString(), data: { type: 'payment', id: 'p1', object: data } });
      return {
        body,
        headers: squareHeaders(body, CATALOG_SECRETS.square, CATALOG_SECRETS.squareUrl),
        signed: { signedHeaders: {}, id: () => id, ...json(body) },
      };
    }
    case 'slack': {
      const body = JSON.stringify({ team_id: 'T1', type: 'event_callback', event_id: id, event_time: NOW_SECONDS, event: { ...data, type } });
      return { body, headers: slackHeaders(body, CATALOG_SECRETS.slack, NOW_SECONDS), signed: { signedHeaders: {}, id: () => id, ...json(body) } };
    }
    case 'linear': {
      const body = JSON.stringify({ action: 'create', type, data, webhookTimestamp: NOW.getTime() });
      // Linear signs the body only: its delivery ID is sent, not signed.
      return {
        body,
        headers: linearHeaders(body, CATALOG_SECRETS.linear, id),
        signed: { signedHeaders: {}, id: (headers) => received(headers['linear-delivery']), ...json(body) },
      };
    }
    case 'twilio': {
      const params = {
        AccountSid: 'AC1',
        MessageSid: 'SM1',
        MessageStatus: 'delivered',
        ...Object.fromEntries(Object.entries(data).map(([key, value]) => [key, JSON.stringify(value)])),
      };
      const { body, headers } = twilioRequest(params, CATALOG_SECRETS.twilio, CATALOG_SECRETS.twilioUrl, id);
      const payload = twilioParams(Buffer.from(body));
      // Twilio signs the URL and the parameters; the idempotency token is sent, not signed.
      return {
        body,
        headers,
        signed: { signedHeaders: {}, id: (sent) => received(sent['i-twilio-idempotency-token']) || `${payload.MessageSid}:${payload.MessageStatus}`, payload },
      };
    }
    case 'sendgrid': {
      const item = { ...data, email: 'ada@example.com', timestamp: NOW_SECONDS, event: type, sg_event_id: id };
      const body = JSON.stringify([item]);
      return {
        body,
        headers: SENDGRID_KEYS.headers(body, NOW_SECONDS),
        signed: { signedHeaders: {}, id: () => id, payload: (JSON.parse(body) as unknown[])[0] },
      };
    }
    case 'adyen': {
      const item = adyenItem(CATALOG_SECRETS.adyen, { pspReference: id, eventCode: type });
      return {
        body: adyenBody([item]),
        headers: { 'content-type': 'application/json' },
        signed: { signedHeaders: {}, id: () => `${id}:${type}:true`, payload: item },
      };
    }
  }
}

// Adyen signs each item inside the body: its signature mutations are the body's.
const SIGNATURE_HEADERS: Record<Provider, string | undefined> = {
  stripe: 'stripe-signature',
  github: 'x-hub-signature-256',
  standard: 'webhook-signature',
  svix: 'svix-signature',
  shopify: 'x-shopify-hmac-sha256',
  paddle: 'paddle-signature',
  square: 'x-square-hmacsha256-signature',
  slack: 'x-slack-signature',
  linear: 'linear-signature',
  twilio: 'x-twilio-signature',
  sendgrid: 'x-twilio-email-event-webhook-signature',
  adyen: undefined,
};

/** The header each provider sends its event ID in (unsigned for GitHub, Shopify, Linear and Twilio). */
const ID_HEADERS: Partial<Record<Provider, string>> = {
  github: 'x-github-delivery',
  standard: 'webhook-id',
  svix: 'svix-id',
  shopify: 'x-shopify-event-id',
  linear: 'linear-delivery',
  twilio: 'i-twilio-idempotency-token',
};

/** Moves a signed timestamp by `seconds`, where the provider sends one in a header. */
const TIMESTAMP_SHIFTS: Partial<Record<Provider, (headers: Record<string, string>, seconds: number) => void>> = {
  stripe: (headers, seconds) =>
    (headers['stripe-signature'] = headers['stripe-signature']!.replace(/t=(\d+)/, (_all, t: string) => `t=${Number(t) + seconds}`)),
  standard: (headers, seconds) => (headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) + seconds)),
  svix: (headers, seconds) => (headers['svix-timestamp'] = String(Number(headers['svix-timestamp']) + seconds)),
  paddle: (headers, seconds) =>
    (headers['paddle-signature'] = headers['paddle-signature']!.replace(/ts=(\d+)/, (_all, t: string) => `ts=${Number(t) + seconds}`)),
  slack: (headers, seconds) => (headers['x-slack-request-timestamp'] = String(Number(headers['x-slack-request-timestamp']) + seconds)),
  sendgrid: (headers, seconds) =>
    (headers['x-twilio-email-event-webhook-timestamp'] = String(Number(headers['x-twilio-email-event-webhook-timestamp']) + seconds)),
};

const mutations = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flip-body-bit' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate-body' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('append-body' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace-signature' as const), value: headerText({ maxLength: 120 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flip-signature-char' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop-header' as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('change-id-header' as const), value: headerText({ maxLength: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('shift-timestamp' as const), seconds: fc.integer({ min: -100_000, max: 100_000 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('content-type' as const),
      value: fc.oneof(
        fc.constantFrom(
          'application/json; charset=utf-8',
          'Application/JSON',
          'application/json;charset=ISO-8859-1',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
        ),
        headerText({ maxLength: 40 }),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compress' as const),
      encoding: fc.constantFrom('gzip', 'deflate', 'br', 'GZIP', 'x-gzip', 'gzip, identity', 'identity', 'Identity'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('declare-length' as const), over: fc.integer({ min: 1, max: 2 ** 31 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('random-bytes' as const),
      bytes: fc.uint8Array({ maxLength: 512 }),
      contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'application/octet-stream'),
    }),
  },
);

type Mutation = typeof mutations extends fc.Arbitrary<infer M> ? M : never;

const COMPRESSORS: Record<string, (body: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

function mutate(
  provider: Provider,
  body: Buffer,
  headers: Record<string, string>,
  mutation: Mutation,
): { body: Buffer; headers: Record<string, string>; declaredLength?: number } {
  const next = { ...headers };
  const signatureHeader = SIGNATURE_HEADERS[provider];
  switch (mutation.kind) {
    case 'none':
      return { body, headers: next };
    case 'flip-body-bit': {
      if (body.length === 0) return { body, headers: next };
      const flipped = Buffer.from(body);
      flipped[mutation.at % body.length] = flipped[mutation.at % body.length]! ^ (1 << mutation.bit);
      return { body: flipped, headers: next };
    }
    case 'truncate-body':
      return { body: body.subarray(0, mutation.at % (body.length + 1)), headers: next };
    case 'append-body':
      return { body: Buffer.concat([body, mutation.bytes]), headers: next };
    case 'replace-signature':
      if (signatureHeader) next[signatureHeader] = mutation.value;
      return { body, headers: next };
    case 'flip-signature-char': {
      if (!signatureHeader) return { body, headers: next };
      const value = next[signatureHeader]!;
      const at = mutation.at % value.length;
      next[signatureHeader] = value.slice(0, at) + (value[at] === 'A' ? 'B' : 'A') + value.slice(at + 1);
      return { body, headers: next };
    }
    case 'drop-header': {
      const names = Object.keys(next);
      delete next[names[mutation.which % names.length]!];
      return { body, headers: next };
    }
    case 'change-id-header': {
      next[ID_HEADERS[provider] ?? 'x-request-id'] = mutation.value;
      return { body, headers: next };
    }
    case 'shift-timestamp': {
      TIMESTAMP_SHIFTS[provider]?.(next, mutation.seconds);
      return { body, headers: next };
    }
    case 'content-type':
      next['content-type'] = mutation.value;
      return { body, headers: next };
    case 'random-bytes':
      return { body: Buffer.from(mutation.bytes), headers: { ...next, 'content-type': mutation.contentType } };
    case 'compress':
      return { body: COMPRESSORS[mutation.encoding.toLowerCase()]?.(body) ?? body, headers: { ...next, 'content-encoding': mutation.encoding } };
    case 'declare-length':
      return { body, headers: next, declaredLength: MAX_BODY_BYTES + mutation.over };
  }
}

const deliveries: fc.Arbitrary<Promise<Delivery>> = fc
  .record({
    provider: fc.constantFrom<Provider>(...PROVIDERS),
    id: eventIds,
    idNotString: fc.option(fc.oneof(fc.integer(), fc.constant(null), fc.constant({})), { freq: 20, nil: undefined }),
    type: eventTypes,
    data: payloads,
    mutation: mutations,
  })
  .map(async ({ provider, id, idNotString, type, data, mutation }) => {
    const { body, headers, signed } = await sign(provider, id, type, data, provider === 'stripe' ? idNotString : undefined);
    const signedBody = Buffer.from(body);
    const sent = mutate(provider, signedBody, headers, mutation);
    return { provider, ...sent, signed: { ...signed, body: signedBody }, mutation: mutation.kind };
  });

/** The one item of an Adyen delivery as received, or undefined when the body holds none. */
function adyenItemOf(body: Buffer): Record<string, unknown> | undefined {
  try {
    return (JSON.parse(body.toString('utf8')) as { notificationItems: Array<{ NotificationRequestItem: Record<string, unknown> }> }).notificationItems[0]!
      .NotificationRequestItem;
  } catch {
    return undefined;
  }
}

/** What Adyen's HMAC covers of an item (its other fields, such as eventDate, travel unsigned). */
const adyenSigned = (item: Record<string, unknown> | undefined) =>
  item &&
  ['pspReference', 'originalReference', 'merchantAccountCode', 'merchantReference', 'eventCode', 'success']
    .map((name) => item[name])
    .concat([(item.amount as { value?: unknown; currency?: unknown } | undefined)?.value, (item.amount as { currency?: unknown } | undefined)?.currency]);

/** A form's parameters as Twilio reads them: a null-prototype object, a name sent several times keeping every value. */
function twilioParams(body: Buffer): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) {
    const existing = params[key];
    params[key] = existing === undefined ? value : [...[existing].flat(), value];
  }
  return params;
}

/**
 * True when the delivery carries exactly the bytes and signed headers that were signed, with a
 * valid signature. Twilio signs the decoded parameters, not the bytes (`%7D` and `%7d` are one
 * signature), and Adyen the item's listed fields: for them, what each signs must be unchanged.
 */
function signedAsSent({ body, headers, signed, provider }: Delivery): boolean {
  if (!signed) return false;
  if (provider === 'adyen') return isDeepStrictEqual(adyenSigned(adyenItemOf(body)), adyenSigned(signed.payload as Record<string, unknown>));
  if (provider === 'twilio') {
    const twilioSigned = (bytes: Buffer) => getExpectedTwilioSignature(CATALOG_SECRETS.twilio, CATALOG_SECRETS.twilioUrl, twilioParams(bytes));
    return headers['x-twilio-signature'] !== undefined && twilioSigned(body) === twilioSigned(signed.body);
  }
  if (!body.equals(signed.body)) return false;
  const signatureHeader = SIGNATURE_HEADERS[provider];
  if (signatureHeader !== undefined && headers[signatureHeader] === undefined) return false;
  return Object.entries(signed.signedHeaders).every(([name, value]) => headers[name] === value);
}

/**
 * Posts a delivery. One with a `declaredLength` goes through node:http, which sends the header as
 * given (fetch would refuse a length its body does not have), and is cut off once answered.
 */
async function send(delivery: Delivery): Promise<Response> {
  const target = `${url}/webhooks/${delivery.provider}`;
  if (delivery.declaredLength === undefined) return fetch(target, { method: 'POST', headers: delivery.headers, body: delivery.body });
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { method: 'POST', agent: false, headers: { ...delivery.headers, 'content-length': String(delivery.declaredLength) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          req.destroy();
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode }));
        });
      },
    );
    req.on('error', reject);
    req.write(delivery.body);
  });
}

let server: Server;
let url: string;
const starter = new RecordingStarter();
beforeAll(async () => {
  const config = loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV, MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, now: () => NOW, logger: silentLogger });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it(`answers ${RUNS} generated deliveries without a 5xx, accepting only what was signed as sent, each with one start`, async () => {
  const counts: Record<string, Record<string, number>> = {};
  const acceptedWorkflowIds = new Set<string>();

  await fc.assert(
    fc.asyncProperty(deliveries, async (generated) => {
      const delivery = await generated;
      const callsBefore = starter.calls.length;
      const response = await send(delivery);
      const text = await response.text();
      // Adyen's 2xx is its own `[accepted]`; SendGrid's lists the batch's items.
      const answer = (text === '[accepted]' ? {} : JSON.parse(text)) as {
        status?: string | number;
        workflowId?: string;
        events?: Array<{ status: string; workflowId: string }>;
      };
      const tally = (counts[delivery.provider] ??= {});
      tally[response.status] = (tally[response.status] ?? 0) + 1;

      expect(response.status).toBeLessThan(500);
      // A compressed body is refused unread, and so is one declared over the limit, whatever it holds.
      const encoding = delivery.headers['content-encoding']?.toLowerCase();
      if (encoding !== undefined && encoding !== 'identity') expect(response.status).toBe(415);
      if (delivery.declaredLength !== undefined) expect(response.status).toBe(413);
      const calls = starter.calls.slice(callsBefore);
      if (response.status >= 300) {
        expect(calls).toEqual([]);
        return;
      }
      expect(signedAsSent(delivery)).toBe(true);
      expect(calls).toHaveLength(1);
      const [{ event, workflowId, workflowType }] = calls as [(typeof calls)[number]];
      expect(FLOWS.filter((flow) => !flow.internal).map((flow) => flow.name)).toContain(workflowType);
      expect(event.id).toBe(delivery.signed!.id(delivery.headers));
      const payload =
        delivery.provider === 'adyen' ? adyenItemOf(delivery.body) : delivery.provider === 'twilio' ? twilioParams(delivery.body) : delivery.signed!.payload;
      expect(isDeepStrictEqual(event.payload, payload)).toBe(true);
      // As the engine answers: a workflow ID started by an earlier delivery is a duplicate.
      const startedBefore = starter.calls.slice(0, callsBefore).some((call) => call.workflowId === workflowId);
      if (delivery.provider === 'sendgrid') expect(answer.events).toEqual([{ eventId: event.id, workflowId, status: startedBefore ? 'duplicate' : 'started' }]);
      else if (delivery.provider === 'adyen') expect(response.status).toBe(startedBefore ? 200 : 202);
      else expect(answer).toMatchObject({ workflowId, status: startedBefore ? 'duplicate' : 'started' });
      acceptedWorkflowIds.add(workflowId);
    }),
    { numRuns: RUNS },
  );

  const accepted = Object.values(counts).reduce((sum, tally) => sum + (tally[200] ?? 0) + (tally[202] ?? 0), 0);
  console.log(`fuzz: ${RUNS} deliveries, ${accepted} accepted; by provider and status: ${JSON.stringify(counts)}`);
  // Each event ID started one workflow: as many started workflows as distinct accepted IDs.
  expect(starter.workflowIds.size).toBe(acceptedWorkflowIds.size);
  // The generator is not so hostile that nothing passes: a tenth or more of the deliveries are intact and valid.
  expect(accepted).toBeGreaterThan(RUNS / 10);
}, 600_000);

describe('the worst refused deliveries of every kind (test/support/hostile.ts), cut to a generated size', () => {
  let hostileServer: Server;
  let hostileUrl: string;
  const hostileStarter = new RecordingStarter();
  const sources = hostileSources();
  beforeAll(async () => {
    const app = createApp({
      sources: new SourceRegistry(sources),
      starter: hostileStarter,
      maxBodyBytes: 4 * MIB,
      now: () => HOSTILE_RECEIVED_AT,
      logger: silentLogger,
    });
    hostileServer = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    hostileUrl = `http://127.0.0.1:${(hostileServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => hostileServer.close(() => resolve())));

  const classes = sources.flatMap((source) =>
    hostileDeliveries(source.kind, createAdapter(source).signatureHeaders).map(({ what, delivery }) => ({ source: source.name, what, delivery })),
  );

  it('answers each with a 4xx of at most 8 KiB and starts nothing, whole or cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...classes), fc.double({ min: 0, max: 1, noNaN: true }), async ({ source, what, delivery }, keep) => {
        const body = keep === 1 ? delivery.rawBody : delivery.rawBody.subarray(0, Math.floor(delivery.rawBody.length * keep));
        const response = await fetch(`${hostileUrl}/webhooks/${source}`, {
          method: 'POST',
          headers: requestHeaders(delivery),
          body,
        });
        const answer = await response.arrayBuffer();
        expect({
          source,
          what,
          status: response.status,
          refused: response.status >= 400 && response.status < 500,
          answerBytes: answer.byteLength <= 8 * 1024,
        }).toMatchObject({ refused: true, answerBytes: true });
      }),
      { numRuns: 200 },
    );
    expect(hostileStarter.calls).toEqual([]);
  }, 300_000);
});
