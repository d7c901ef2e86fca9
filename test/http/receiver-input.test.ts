import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscriptionWorkflowId } from '../../contracts';
import { applySubscriptionEventFlow, fulfilCheckoutFlow, notifyGitHubFlow, recordEventFlow } from '../../workflows';
import { loadReceiverConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { githubHeaders, SECRETS, SECRETS_ENV, standardHeaders, stripeEvent, stripeHeaders } from '../support/signing';
import { RecordingStarter } from '../support/recording-starter';
import { post } from '../support/stack';

// The receiver's answers to bad input, on the real app with a fake EventStarter: no Temporal and
// no database, and every event that would have started a workflow is in `starter.started`.
let starter: RecordingStarter;
let server: Server;
let receiver: { url: string };
beforeEach(async () => {
  starter = new RecordingStarter();
  const config = loadReceiverConfig({ ...SECRETS_ENV, MAX_BODY_BYTES: String(64 * 1024) });
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  receiver = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

function signedStripe(overrides: Record<string, unknown> = {}, secret = SECRETS.stripe) {
  const event = stripeEvent(overrides);
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, secret) };
}

it('starts a correctly signed delivery once (the control for every case below)', async () => {
  const { id, body, headers } = signedStripe();
  const response = await post(`${receiver.url}/webhooks/stripe`, headers, body);
  expect(response.status).toBe(202);
  expect(starter.started.map((event) => event.id)).toEqual([id]);
});

it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('starts an event of type %s as any unknown type: recorded as ignored', async (type) => {
  const { id, body, headers } = signedStripe({ type });
  expect((await post(`${receiver.url}/webhooks/stripe`, headers, body)).status).toBe(202);
  expect(starter.started.map((event) => [event.id, event.type])).toEqual([[id, type]]);
  expect(starter.calls.map((call) => call.workflowType)).toEqual([recordEventFlow.name]);
});

it("starts each event type as its source's routes in WEBHOOKS_CONFIG say, over the kind's defaults", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-routes-')), 'webhooks.yaml');
  writeFileSync(
    file,
    `sources:\n  - name: billing\n    kind: stripe\n    secret: ${SECRETS.stripe}\n    routes:\n      invoice.paid: notifyGitHub\n      "checkout.*": recordEvent\n`,
  );
  const config = loadReceiverConfig({ ...SECRETS_ENV, WEBHOOKS_CONFIG: file });
  const routed = new RecordingStarter();
  const app = createApp({ sources: new SourceRegistry(config.sources), starter: routed, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  const routedServer = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  try {
    const url = `http://127.0.0.1:${(routedServer.address() as AddressInfo).port}`;
    for (const [source, type] of [
      ['billing', 'invoice.paid'],
      ['billing', 'checkout.session.completed'],
      ['billing', 'customer.subscription.created'],
      ['stripe', 'checkout.session.completed'],
    ]) {
      const { body, headers } = signedStripe({ type });
      expect((await post(`${url}/webhooks/${source}`, headers, body)).status).toBe(202);
    }
    expect(routed.calls.map((call) => call.workflowType)).toEqual([
      notifyGitHubFlow.name,
      recordEventFlow.name,
      applySubscriptionEventFlow.name,
      fulfilCheckoutFlow.name,
    ]);
  } finally {
    await new Promise<void>((resolve) => routedServer.close(() => resolve()));
  }
});

it('refuses compressed bodies before reading them: concurrent gzip bombs leave memory flat, and a signed delivery after them is started', async () => {
  // The default MAX_BODY_BYTES (25 MiB), which 25 MB of zeros inflated would fit.
  const config = loadReceiverConfig(SECRETS_ENV);
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  const bombed = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(bombed.address() as AddressInfo).port}/webhooks/stripe`;
  const bomb = gzipSync(Buffer.alloc(25_000_000));
  const { headers } = signedStripe();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  try {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetch(url, { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip' }, body: bomb }).then(async (response) => ({
          status: response.status,
          type: ((await response.json()) as { type: string }).type,
        })),
      ),
    );
    expect(answers).toEqual(answers.map(() => ({ status: 415, type: 'urn:durable-webhooks:problem:unsupported-content-encoding' })));
    // 40 bombs inflated would take 1 GB or more; refused unread, each costs its 25 KB.
    expect(peak - before).toBeLessThan(100 * 2 ** 20);
    const delivery = signedStripe();
    expect((await post(url, delivery.headers, delivery.body)).status).toBe(202);
    expect(starter.started.map((event) => event.id)).toEqual([delivery.id]);
  } finally {
    clearInterval(sampler);
    await new Promise<void>((resolve) => bombed.close(() => resolve()));
  }
});

it('answers 503 problem+json when Temporal does not confirm the start', async () => {
  starter.unavailable = true;
  const { body, headers } = signedStripe();
  const response = await post(`${receiver.url}/webhooks/stripe`, headers, body);
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect((await fetch(`${receiver.url}/readyz`)).status).toBe(503);
});

describe('bad input gets a problem+json answer and starts nothing', () => {
  const MARKER = 'payload-marker-that-must-not-be-echoed';

  type Case = { name: string; status: number; detail: RegExp; request: () => Promise<{ path: string; headers: Record<string, string>; body: string }> };
  const cases: Case[] = [
    {
      name: 'a Stripe signature made with another secret',
      status: 400,
      detail: /No signatures found matching/,
      request: async () => ({ path: 'stripe', ...signedStripe({ description: MARKER }, 'whsec_wrong') }),
    },
    {
      name: 'a missing Stripe-Signature header',
      status: 400,
      detail: /Stripe-Signature header is missing/,
      request: async () => {
        const { body } = signedStripe({ description: MARKER });
        return { path: 'stripe', body, headers: { 'content-type': 'application/json' } };
      },
    },
    {
      name: 'a body changed after signing',
      status: 400,
      detail: /No signatures found matching/,
      request: async () => {
        const { body, headers } = signedStripe({ description: MARKER });
        return { path: 'stripe', headers, body: body.replace('"livemode":false', '"livemode":true') };
      },
    },
    {
      name: 'a timestamp outside the 300 s tolerance',
      status: 400,
      detail: /outside the 300 s tolerance/,
      request: async () => {
        const event = stripeEvent({ description: MARKER });
        const body = JSON.stringify(event);
        return { path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe, Math.floor(Date.now() / 1000) - 600) };
      },
    },
    {
      name: 'malformed JSON, correctly signed',
      status: 400,
      detail: /not valid JSON/,
      request: async () => {
        const body = `{"id":"evt_${randomUUID()}","description":"${MARKER}",`;
        return { path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
      },
    },
    {
      name: 'a signed event without an event ID',
      status: 400,
      detail: /no ID/,
      request: async () => {
        const body = JSON.stringify({ ...stripeEvent({ description: MARKER }), id: undefined });
        return { path: 'stripe', body, headers: stripeHeaders(body, SECRETS.stripe) };
      },
    },
    {
      name: 'a GitHub delivery without X-GitHub-Delivery',
      status: 400,
      detail: /no delivery ID/,
      request: async () => {
        const body = JSON.stringify({ action: 'opened', marker: MARKER });
        const { 'x-github-delivery': _dropped, ...headers } = await githubHeaders(body, SECRETS.github, { delivery: randomUUID(), event: 'issues' });
        return { path: 'github', body, headers };
      },
    },
    {
      name: 'a Standard Webhooks delivery signed with another secret',
      status: 400,
      detail: /does not match/,
      request: async () => {
        const body = JSON.stringify({ type: 'order.created', data: { marker: MARKER } });
        return {
          path: 'standard',
          body,
          headers: standardHeaders(body, `whsec_${Buffer.from('wrong key').toString('base64')}`, { id: `msg_${randomUUID()}` }),
        };
      },
    },
    {
      name: 'a validly signed webhook-id of 1,100 characters',
      status: 400,
      detail: /^The event ID \(webhook-id header\) is 1100 characters long; at most 192 are accepted\.$/,
      request: async () => {
        const body = JSON.stringify({ type: 'order.created', data: { marker: MARKER } });
        return { path: 'standard', body, headers: standardHeaders(body, SECRETS.standard, { id: `msg_${'x'.repeat(1096)}` }) };
      },
    },
    {
      name: 'a validly signed Stripe event ID with a space and a newline',
      status: 400,
      detail: /^The event ID \("id"\) may contain only printable ASCII characters, without spaces\.$/,
      request: async () => ({ path: 'stripe', ...signedStripe({ id: 'evt_1 \nforged log line', description: MARKER }) }),
    },
    {
      name: 'a validly signed event type of 200 characters',
      status: 400,
      detail: /^The event type \("type"\) is 200 characters long; at most 128 are accepted\.$/,
      request: async () => ({ path: 'stripe', ...signedStripe({ type: `a.${'b'.repeat(198)}`, description: MARKER }) }),
    },
    {
      name: 'a validly signed event ID in the form reserved for internal workflows',
      status: 400,
      detail: /^The event ID \(webhook-id header\) may not start with "durable-webhooks:", which is reserved/,
      request: async () => {
        const body = JSON.stringify({ type: 'customer.subscription.updated', data: { marker: MARKER } });
        return { path: 'standard', body, headers: standardHeaders(body, SECRETS.standard, { id: subscriptionWorkflowId('sub_1') }) };
      },
    },
    {
      name: "a validly signed event ID in the form of a route's subscriber run of another event",
      status: 400,
      detail: /^The event ID \("id"\) may not end with "~fulfilCheckout", the form of a flow's run of another event \(<event>~<flow>\)\.$/,
      request: async () => ({ path: 'stripe', ...signedStripe({ id: 'evt_1~fulfilCheckout', description: MARKER }) }),
    },
    {
      name: 'an unknown source',
      status: 404,
      detail: /No webhook source named "shopify"/,
      request: async () => ({ path: 'shopify', ...signedStripe({ description: MARKER }) }),
    },
    {
      name: 'a body over MAX_BODY_BYTES',
      status: 413,
      detail: /larger than the limit of 65536 bytes/,
      request: async () => ({ path: 'stripe', ...signedStripe({ description: MARKER + 'x'.repeat(70 * 1024) }) }),
    },
    {
      name: 'a compressed body (refused by its Content-Encoding, unread)',
      status: 415,
      detail: /Content-Encoding gzip is not accepted; send the body uncompressed/,
      request: async () => {
        const { body, headers } = signedStripe({ description: MARKER });
        return { path: 'stripe', body, headers: { ...headers, 'content-encoding': 'gzip' } };
      },
    },
    {
      name: 'an unsupported content type',
      status: 415,
      detail: /Content-Type text\/plain is not accepted here; send application\/json/,
      request: async () => {
        const { body, headers } = signedStripe({ description: MARKER });
        return { path: 'stripe', body, headers: { ...headers, 'content-type': 'text/plain' } };
      },
    },
  ];

  it.each(cases)('$name → $status', async ({ status, detail, request }) => {
    const { path: source, headers, body } = await request();
    const response = await post(`${receiver.url}/webhooks/${source}`, headers, body);

    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.json).toMatchObject({
      status,
      type: expect.stringMatching(/^urn:durable-webhooks:problem:/),
      title: expect.any(String),
      detail: expect.stringMatching(detail),
    });
    for (const secret of [...Object.values(SECRETS), MARKER]) expect(response.text).not.toContain(secret);
    if (headers['stripe-signature']) expect(response.text).not.toContain(headers['stripe-signature']);
    expect(starter.started).toEqual([]);
  });

  it('answers GET on a webhook route 405 with Allow: POST', async () => {
    const response = await fetch(`${receiver.url}/webhooks/stripe`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});
