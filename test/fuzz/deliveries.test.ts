import { isDeepStrictEqual } from 'node:util';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { WorkflowType } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { silentLogger } from '../../src/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { RecordingStarter } from '../support/recording-starter';
import { githubHeaders, SECRETS, SECRETS_ENV, standardHeaders, stripeHeaders } from '../support/signing';

/**
 * Generated deliveries for the three providers, signed by each provider's own library and then
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

type Provider = 'stripe' | 'github' | 'standard';

/** What was signed, so an accepted delivery can be checked against it. */
interface Signed {
  body: Buffer;
  /** Headers the signature covers, by lower-case name, as signed. */
  signedHeaders: Record<string, string>;
  /** The event ID an accepted delivery must carry. */
  id: unknown;
}

interface Delivery {
  provider: Provider;
  body: Buffer;
  headers: Record<string, string>;
  signed: Signed | null;
  mutation: string;
}

// Text a provider could put in a header: Node sends and parses header values as latin1.
const headerText = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((code) => code < 0x7f || code > 0x9f).map((code) => String.fromCharCode(code)), ...constraints });

const hostileNames = fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'durable-webhooks:subscription:sub_1', 'durable-webhooks:msg_1', '', ' ', 'a b', '..', '%00');
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

async function sign(provider: Provider, id: string, type: string, data: Record<string, unknown>, idNotString: unknown): Promise<{ body: string; headers: Record<string, string>; signed: Omit<Signed, 'body'> }> {
  if (provider === 'stripe') {
    const eventId = idNotString ?? id;
    const body = JSON.stringify({ id: eventId, object: 'event', created: NOW_SECONDS, type, data: { object: data }, livemode: false });
    return { body, headers: stripeHeaders(body, SECRETS.stripe, NOW_SECONDS), signed: { signedHeaders: {}, id: eventId } };
  }
  if (provider === 'github') {
    const [event, action] = type.split(/\.(.*)/s);
    const body = JSON.stringify(action ? { action, ...data } : data);
    // GitHub signs the body only: its delivery ID and event name are sent, not signed.
    return { body, headers: await githubHeaders(body, SECRETS.github, { delivery: id, event: event || type }), signed: { signedHeaders: {}, id } };
  }
  const body = JSON.stringify({ type, timestamp: NOW.toISOString(), data });
  const headers = standardHeaders(body, SECRETS.standard, { id, timestamp: NOW });
  return { body, headers, signed: { signedHeaders: { 'webhook-id': headers['webhook-id']!, 'webhook-timestamp': headers['webhook-timestamp']! }, id } };
}

const SIGNATURE_HEADERS: Record<Provider, string> = { stripe: 'stripe-signature', github: 'x-hub-signature-256', standard: 'webhook-signature' };

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
        fc.constantFrom('application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=ISO-8859-1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''),
        headerText({ maxLength: 40 }),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('random-bytes' as const), bytes: fc.uint8Array({ maxLength: 512 }), contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'application/octet-stream') }) },
);

type Mutation = typeof mutations extends fc.Arbitrary<infer M> ? M : never;

function mutate(provider: Provider, body: Buffer, headers: Record<string, string>, mutation: Mutation): { body: Buffer; headers: Record<string, string> } {
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
      next[signatureHeader] = mutation.value;
      return { body, headers: next };
    case 'flip-signature-char': {
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
      const name = provider === 'github' ? 'x-github-delivery' : provider === 'standard' ? 'webhook-id' : 'x-request-id';
      next[name] = mutation.value;
      return { body, headers: next };
    }
    case 'shift-timestamp': {
      if (provider === 'standard') next['webhook-timestamp'] = String(Number(next['webhook-timestamp']) + mutation.seconds);
      if (provider === 'stripe') next['stripe-signature'] = next['stripe-signature']!.replace(/t=(\d+)/, (_all, t: string) => `t=${Number(t) + mutation.seconds}`);
      return { body, headers: next };
    }
    case 'content-type':
      next['content-type'] = mutation.value;
      return { body, headers: next };
    case 'random-bytes':
      return { body: Buffer.from(mutation.bytes), headers: { ...next, 'content-type': mutation.contentType } };
  }
}

const deliveries: fc.Arbitrary<Promise<Delivery>> = fc
  .record({
    provider: fc.constantFrom<Provider>('stripe', 'github', 'standard'),
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

/** True when the delivery carries exactly the bytes and signed headers that were signed, with a valid signature. */
function signedAsSent({ body, headers, signed, provider }: Delivery): boolean {
  if (!signed || !body.equals(signed.body)) return false;
  const signature = headers[SIGNATURE_HEADERS[provider]];
  if (signature === undefined) return false;
  return Object.entries(signed.signedHeaders).every(([name, value]) => headers[name] === value);
}

let server: Server;
let url: string;
const starter = new RecordingStarter();
beforeAll(async () => {
  const config = loadReceiverConfig({ ...SECRETS_ENV, MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
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
      const response = await fetch(`${url}/webhooks/${delivery.provider}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
      const answer = (await response.json()) as { status?: string | number; workflowId?: string };
      const tally = (counts[delivery.provider] ??= {});
      tally[response.status] = (tally[response.status] ?? 0) + 1;

      expect(response.status).toBeLessThan(500);
      const calls = starter.calls.slice(callsBefore);
      if (response.status >= 300) {
        expect(calls).toEqual([]);
        return;
      }
      expect(signedAsSent(delivery)).toBe(true);
      expect(calls).toHaveLength(1);
      const [{ event, workflowId, workflowType }] = calls as [(typeof calls)[number]];
      expect(Object.values(WorkflowType)).toContain(workflowType);
      // GitHub's delivery ID is the header as received: HTTP strips a value's surrounding spaces and tabs.
      expect(event.id).toBe(delivery.provider === 'github' ? delivery.headers['x-github-delivery']!.replace(/^[\t ]+|[\t ]+$/g, '') : delivery.signed!.id);
      expect(isDeepStrictEqual(event.payload, JSON.parse(delivery.signed!.body.toString('utf8')))).toBe(true);
      expect(answer.workflowId).toBe(workflowId);
      // As the engine answers: a workflow ID started by an earlier delivery is a duplicate.
      const startedBefore = starter.calls.slice(0, callsBefore).some((call) => call.workflowId === workflowId);
      expect(answer.status).toBe(startedBefore ? 'duplicate' : 'started');
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
