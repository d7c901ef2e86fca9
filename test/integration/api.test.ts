import { gzipSync } from 'node:zlib';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../src/db/database';
import { createApp } from '../../src/http/app';
import { WorkflowNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId, messageWorkflowId } from '../../contracts';
import { MAX_ENDPOINTS_PER_MESSAGE, MessageService, messageIdFor } from '../../src/outbound/messages';
import { createEndpoint } from '../../src/db/endpoints';
import { SourceRegistry } from '../../src/providers/registry';
import type { EventStarter } from '../../src/intake/port';
import { startEndpointServer } from '../support/endpoint-server';
import { sqlOf } from '../support/database';
import { listen } from '../../src/dev/http-server';
import { runCli } from '../support/processes';
import { startStack, type WorkerStack } from '../support/stack';

/** `POST /v1/messages` with Idempotency-Key, the endpoints registry, and durable delivery. */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({
    env: {
      API_TOKENS: 'alpha:tok_alpha_0123456789abcdef0123456789 beta:tok_beta_0123456789abcdef0123456789',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      DELIVERY_SCHEDULE: '0s 1s 1s',
    },
  });
});
afterAll(() => stack.close());

const api = (path: string, init: RequestInit & { token?: string; key?: string } = {}) =>
  fetch(`${stack.url}/v1${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.token !== '' && { authorization: `Bearer ${init.token ?? 'tok_alpha_0123456789abcdef0123456789'}` }),
      ...(init.key && { 'idempotency-key': init.key }),
      ...init.headers,
    },
  });
const publish = (key: string, body: unknown, token?: string) => api('/messages', { method: 'POST', key, token, body: JSON.stringify(body) });
const newKey = () => `key-${Math.random().toString(36).slice(2)}`;

async function endpointFor(url: string, extra: Record<string, unknown> = {}, token?: string) {
  const response = await api('/endpoints', { method: 'POST', token, body: JSON.stringify({ url, ...extra }) });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; secret: string };
}

describe('POST /v1/messages', () => {
  it('201 with a receipt, then 200 with the same receipt and Idempotent-Replayed for the same key and body, 422 for another body', async () => {
    const endpoint = await startEndpointServer();
    const { id: endpointId } = await endpointFor(endpoint.url, { eventTypes: ['order.shipped'] });
    const key = newKey();
    const body = { eventType: 'order.shipped', payload: { orderId: 'ord_1', carrier: 'dhl' } };

    const first = await publish(key, body);
    expect(first.status).toBe(201);
    const receipt = (await first.json()) as { id: string; endpoints: string[] };
    expect(receipt).toEqual({ id: expect.stringMatching(/^msg_/), eventType: 'order.shipped', createdAt: expect.any(String), endpoints: [endpointId] });

    const again = await publish(key, { payload: { carrier: 'dhl', orderId: 'ord_1' }, eventType: 'order.shipped' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(receipt);

    const other = await publish(key, { ...body, payload: { orderId: 'ord_2' } });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ type: 'urn:durable-webhooks:problem:idempotency-key-reused' });

    const otherToken = await publish(key, body, 'tok_beta_0123456789abcdef0123456789');
    expect(otherToken.status).toBe(201);
    expect(((await otherToken.json()) as { id: string }).id).not.toBe(receipt.id);
    await endpoint.close();
  });

  it('50 concurrent requests with one key and body: one message, one delivery, the same receipt in every response', async () => {
    const endpoint = await startEndpointServer();
    await endpointFor(endpoint.url, { eventTypes: ['invoice.paid'] });
    const key = newKey();
    const responses = await Promise.all(Array.from({ length: 50 }, () => publish(key, { eventType: 'invoice.paid', payload: { invoice: 'in_1' } })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(49);
    const receipts = await Promise.all(responses.map((response) => response.json()));
    expect(new Set(receipts.map((receipt) => JSON.stringify(receipt))).size).toBe(1);

    const messageId = (receipts[0] as { id: string }).id;
    await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
    expect(endpoint.received).toHaveLength(1);
    await endpoint.close();
  });

  it.each([
    [
      'no Idempotency-Key',
      (key: string) => api('/messages', { method: 'POST', body: JSON.stringify({ eventType: 'a.b', payload: {}, key }) }),
      400,
      /Idempotency-Key header is required/,
    ],
    ['no token', (key: string) => api('/messages', { method: 'POST', token: '', key, body: '{}' }), 401, /Bearer/],
    ['a wrong token', (key: string) => api('/messages', { method: 'POST', token: 'tok_wrong_0123456789abcdef0123456789', key, body: '{}' }), 401, /Bearer/],
    ['invalid JSON', (key: string) => api('/messages', { method: 'POST', key, body: '{"eventType":' }), 400, /JSON/],
    ['no eventType', (key: string) => publish(key, { payload: {} }), 400, /"eventType" is required/],
    ['no payload', (key: string) => publish(key, { eventType: 'a.b' }), 400, /"payload" is required/],
    ['a payload over the size limit', (key: string) => publish(key, { eventType: 'a.b', payload: 'x'.repeat(300 * 1024) }), 413, /larger than the limit/],
    [
      'a compressed body, unread',
      (key: string) =>
        api('/messages', { method: 'POST', key, headers: { 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ eventType: 'a.b', payload: {} })) }),
      415,
      /Content-Encoding gzip is not accepted/,
    ],
  ])('refuses %s, publishing nothing', async (_reason, request, status, detail) => {
    const key = newKey();
    const response = await request(key);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { detail: string }).detail).toMatch(detail);
    await expect(stack.client.workflow.getHandle(messageWorkflowId(messageIdFor('alpha', key))).describe()).rejects.toThrow(WorkflowNotFoundError);
  });

  it('answers its own errors: a 401 names the API realm, and no refused request counts as a webhook delivery', async () => {
    const deliveries = async () => (await (await fetch(stack.metricsUrl)).text()).split('\n').filter((line) => line.startsWith('webhook_deliveries_total'));
    const before = await deliveries();
    const refused = await api('/messages', { method: 'POST', token: '', key: newKey(), body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="durable-webhooks api"');
    expect((await publish(newKey(), { eventType: 'a.b', payload: 'x'.repeat(300 * 1024) })).status).toBe(413);
    expect(await deliveries()).toEqual(before);
  });

  it('409 for a repeat that arrives while the first request with its key is still being recorded; 200 once it is', async () => {
    // A database whose endpoint lookup waits at a gate: the first request is provably still in flight.
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const db: Database = {
      ...stack.db,
      query: async (sql, params) => {
        if (sqlOf(sql).includes('FROM endpoints')) {
          reached();
          await gate;
        }
        return stack.db.query(sql, params);
      },
    };
    const messages = new MessageService(stack.client, db, { taskQueue: stack.taskQueue, scheduleMs: [0], inFlightWaitMs: 0 });
    const starter: EventStarter = { start: () => Promise.reject(new Error('unused')), needs: 'Temporal', ready: async () => true };
    const app = createApp({
      sources: new SourceRegistry([]),
      starter,
      maxBodyBytes: 65536,
      api: { db, messages, tokens: [{ scope: 'alpha', token: 'tok_alpha_0123456789abcdef0123456789' }], allowPrivateEndpoints: true },
    });
    const server = await listen(app);
    const key = newKey();
    const send = () =>
      fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: 'Bearer tok_alpha_0123456789abcdef0123456789', 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ eventType: 'a.b', payload: {} }),
      });

    const first = send();
    await atGate;
    const repeat = await send();
    expect(repeat.status).toBe(409);
    expect(await repeat.json()).toMatchObject({ type: 'urn:durable-webhooks:problem:idempotency-key-in-use' });
    open();
    expect((await first).status).toBe(201);
    expect((await send()).status).toBe(200);
    await server.close();
  });

  it('409, not 404, for a repeat that waited on a first request which then failed; the next retry publishes', async () => {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let fail!: () => void;
    const gate = new Promise<void>((resolve) => (fail = resolve));
    let failures = 1;
    const db: Database = {
      ...stack.db,
      query: async (sql, params) => {
        if (sqlOf(sql).includes('FROM endpoints') && failures > 0) {
          failures--;
          reached();
          await gate;
          throw new Error('connection lost');
        }
        return stack.db.query(sql, params);
      },
    };
    const messages = new MessageService(stack.client, db, { taskQueue: stack.taskQueue, scheduleMs: [0], inFlightWaitMs: 10_000 });
    const key = newKey();
    const body = { eventType: 'a.b', payload: {} };

    const first = messages.publish('alpha', key, body);
    await atGate;
    const repeat = messages.publish('alpha', key, body);
    fail();
    await expect(first).rejects.toThrow('connection lost');
    await expect(repeat).rejects.toMatchObject({ status: 409, message: expect.stringContaining('failed before it was recorded; retry this one') });
    await expect(messages.publish('alpha', key, body)).resolves.toMatchObject({ replayed: false });
  });

  it('keeps the JSON as sent: numbers beyond 2^53 are delivered unchanged, and bodies differing only there are different requests', async () => {
    const endpoint = await startEndpointServer();
    await endpointFor(endpoint.url, { eventTypes: ['ledger.entry'] });
    const key = newKey();
    const raw = (id: string) => `{"eventType":"ledger.entry","payload":{"id":${id},"amount":1.10,"nested":[9007199254740993]}}`;
    const published = await api('/messages', { method: 'POST', key, body: raw('12345678901234567890123') });
    expect(published.status).toBe(201);
    const { id: messageId } = (await published.json()) as { id: string };
    await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
    expect(endpoint.received[0]!.body).toContain('"data":{"id":12345678901234567890123,"amount":1.10,"nested":[9007199254740993]}');

    expect((await api('/messages', { method: 'POST', key, body: raw('12345678901234567890123') })).status).toBe(200);
    expect((await api('/messages', { method: 'POST', key, body: raw('12345678901234567890124') })).status).toBe(422);
    await endpoint.close();
  });

  it('delivers a 250 KB payload to 20 endpoints with small workflow histories: the payload is stored once, workflows pass its reference', async () => {
    const endpoint = await startEndpointServer();
    for (let index = 0; index < 20; index++) await endpointFor(endpoint.url, { eventTypes: ['report.ready'] }, 'tok_beta_0123456789abcdef0123456789');
    const payload = { report: 'r'.repeat(250 * 1000) };
    const response = await publish(newKey(), { eventType: 'report.ready', payload }, 'tok_beta_0123456789abcdef0123456789');
    expect(response.status).toBe(201);
    const { id: messageId, endpoints } = (await response.json()) as { id: string; endpoints: string[] };
    const handle = stack.client.workflow.getHandle(messageWorkflowId(messageId));
    expect(await handle.result()).toMatchObject({ deliveries: Array(endpoints.length).fill(expect.objectContaining({ status: 'delivered' })) });

    expect(endpoint.received).toHaveLength(20);
    for (const delivery of endpoint.received) expect(JSON.parse(delivery.body)).toMatchObject({ type: 'report.ready', data: payload });
    const historyBytes = async (workflowId: string) => JSON.stringify(await stack.client.workflow.getHandle(workflowId).fetchHistory()).length;
    // 20 children's starts and results vary with how the worker batches them; one copy of the payload would be 250 KB.
    expect(await historyBytes(messageWorkflowId(messageId))).toBeLessThan(128 * 1024);
    expect(await historyBytes(deliveryWorkflowId(messageWorkflowId(messageId), endpoints[0]!))).toBeLessThan(16 * 1024);
    await endpoint.close();
  });

  it('refuses (422) a message more endpoints subscribe to than one message can go to, recording nothing', async () => {
    for (let index = 0; index <= MAX_ENDPOINTS_PER_MESSAGE; index++) {
      await createEndpoint(stack.db, 'beta', { url: 'https://hooks.example.com/bulk', description: null, eventTypes: ['bulk.import'] });
    }
    const key = newKey();
    const response = await publish(key, { eventType: 'bulk.import', payload: {} }, 'tok_beta_0123456789abcdef0123456789');
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: string }).detail).toBe(
      `${MAX_ENDPOINTS_PER_MESSAGE + 1} endpoints subscribe to bulk.import; a message goes to at most ${MAX_ENDPOINTS_PER_MESSAGE}. Narrow the endpoints' eventTypes.`,
    );
    await expect(stack.client.workflow.getHandle(messageWorkflowId(messageIdFor('beta', key))).describe()).rejects.toThrow(WorkflowNotFoundError);
  });
});

describe('delivery', () => {
  it('retries a 500 twice, then succeeds: three attempts, one webhook-id, signatures that verify, attempts on GET /v1/messages/:id', async () => {
    const endpoint = await startEndpointServer([500, 500]);
    const { id: endpointId, secret } = await endpointFor(endpoint.url, { eventTypes: ['payout.sent'] });
    const response = await publish(newKey(), { eventType: 'payout.sent', payload: { payout: 'po_1', amount: 1000 } });
    const { id: messageId } = (await response.json()) as { id: string };
    expect(await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result()).toMatchObject({ deliveries: [{ status: 'delivered', attempts: 3 }] });

    expect(endpoint.received).toHaveLength(3);
    expect(endpoint.received.map((delivery) => delivery.headers['webhook-id'])).toEqual([messageId, messageId, messageId]);
    for (const delivery of endpoint.received) {
      expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toMatchObject({ type: 'payout.sent', data: { payout: 'po_1', amount: 1000 } });
    }

    const view = (await (await api(`/messages/${messageId}`)).json()) as {
      deliveries: Array<{ endpointId: string; status: string; attempts: Array<{ statusCode: number; latencyMs: number; error: string | null }> }>;
    };
    expect(view.deliveries).toEqual([
      {
        endpointId,
        status: 'delivered',
        attempts: [
          expect.objectContaining({ attempt: 1, statusCode: 500, error: 'HTTP 500: ok', latencyMs: expect.any(Number) }),
          expect.objectContaining({ attempt: 2, statusCode: 500 }),
          expect.objectContaining({ attempt: 3, statusCode: 200, error: null }),
        ],
      },
    ]);
    expect((await api(`/messages/${messageId}`, { token: 'tok_beta_0123456789abcdef0123456789' })).status).toBe(404);
    await endpoint.close();
  });

  it('disables an endpoint that answers 410 and stops delivering to it', async () => {
    const endpoint = await startEndpointServer([410]);
    const { id: endpointId } = await endpointFor(endpoint.url, { eventTypes: ['user.deleted'] });
    const { id: messageId } = (await (await publish(newKey(), { eventType: 'user.deleted', payload: {} })).json()) as { id: string };
    expect(await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result()).toMatchObject({ deliveries: [{ status: 'gone', attempts: 1 }] });
    expect(await (await api(`/endpoints/${endpointId}`)).json()).toMatchObject({ disabled: true, disabledReason: 'the endpoint answered 410 Gone' });
    expect(((await (await publish(newKey(), { eventType: 'user.deleted', payload: {} })).json()) as { endpoints: string[] }).endpoints).toEqual([]);
    await endpoint.close();
  });
});

describe('durable-webhooks messages redeliver', () => {
  it('starts a fresh delivery after the schedule ran out; an unknown message exits 1', async () => {
    const endpoint = await startEndpointServer([500, 500, 500]);
    await endpointFor(endpoint.url, { eventTypes: ['refund.created'] });
    const { id: messageId } = (await (await publish(newKey(), { eventType: 'refund.created', payload: { refund: 're_1' } })).json()) as { id: string };
    expect(await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result()).toMatchObject({ deliveries: [{ status: 'failed', attempts: 3 }] });

    const env = { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: stack.taskQueue, DELIVERY_SCHEDULE: '0s' };
    const { code, output } = await runCli(['messages', 'redeliver', messageId, '--json'], env);
    expect(code).toBe(0);
    const { deliveries } = JSON.parse(output) as { deliveries: string[] };
    expect(await stack.client.workflow.getHandle(deliveries[0]!).result()).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(endpoint.received.map((delivery) => delivery.headers['webhook-id'])).toEqual(Array(4).fill(messageId));

    expect(await runCli(['messages', 'redeliver', 'msg_unknown'], env)).toMatchObject({ code: 1, error: 'No message msg_unknown.' });
    await endpoint.close();
  });
});

describe('POST /v1/messages/:id/erase', () => {
  it('removes the payload once the deliveries have ended, keeps the receipt and attempts, and a redelivery cannot send it', async () => {
    const marker = `erase-${newKey()}`;
    const endpoint = await startEndpointServer([200]);
    await endpointFor(endpoint.url, { eventTypes: ['customer.exported'] });
    const { id: messageId } = (await (await publish(newKey(), { eventType: 'customer.exported', payload: { email: `${marker}@example.com` } })).json()) as {
      id: string;
    };
    const erase = (id: string, body: unknown, token?: string) => api(`/messages/${id}/erase`, { method: 'POST', token, body: JSON.stringify(body) });
    const stored = async () =>
      (await stack.db.query<{ payload: string | null }>('SELECT payload FROM message_payloads WHERE message_id = $1', [messageId])).rows;

    await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
    // Another scope sees no such message; a reason is required.
    expect((await erase(messageId, { reason: 'x' }, 'tok_beta_0123456789abcdef0123456789')).status).toBe(404);
    expect((await erase(messageId, {})).status).toBe(400);

    const erased = await erase(messageId, { reason: 'GDPR request 44' });
    expect(erased.status).toBe(200);
    expect(await erased.json()).toMatchObject({ id: messageId, erasedNow: true, reason: 'GDPR request 44', erasedAt: expect.any(String) });
    expect(await stored()).toEqual([{ payload: null }]);
    expect(JSON.stringify(await stored())).not.toContain(marker);
    expect(await (await api(`/messages/${messageId}`)).json()).toMatchObject({
      id: messageId,
      deliveries: [{ status: 'delivered' }],
      erasure: { reason: 'GDPR request 44' },
    });
    expect(await (await erase(messageId, { reason: 'again' })).json()).toMatchObject({ erasedNow: false, reason: 'GDPR request 44' });

    // A redelivery fails for good, and sends nothing.
    const env = { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: stack.taskQueue, DELIVERY_SCHEDULE: '0s' };
    const { deliveries } = JSON.parse((await runCli(['messages', 'redeliver', messageId, '--json'], env)).output) as { deliveries: string[] };
    await expect(stack.client.workflow.getHandle(deliveries[0]!).result()).rejects.toThrow();
    expect(endpoint.received).toHaveLength(1);
    await endpoint.close();
  });

  it('refuses (409) while a delivery still retries, and changes nothing', async () => {
    const endpoint = await startEndpointServer([500, 500, 500]);
    await endpointFor(endpoint.url, { eventTypes: ['customer.retried'] });
    const { id: messageId } = (await (await publish(newKey(), { eventType: 'customer.retried', payload: { note: 'kept' } })).json()) as { id: string };
    const refused = await api(`/messages/${messageId}/erase`, { method: 'POST', body: JSON.stringify({ reason: 'too early' }) });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: 'urn:durable-webhooks:problem:message-delivering' });
    expect((await stack.db.query('SELECT payload FROM message_payloads WHERE message_id = $1', [messageId])).rows).toEqual([{ payload: '{"note":"kept"}' }]);
    await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
    await endpoint.close();
  });
});

describe('/v1/endpoints', () => {
  it('creates with a whsec_ secret, lists, reads, updates, rotates and deletes, within the token scope', async () => {
    const created = await endpointFor('https://hooks.example.com/in', { description: 'shop', eventTypes: ['a.b'] });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^ep_/),
      secret: expect.stringMatching(/^whsec_/),
      url: 'https://hooks.example.com/in',
      eventTypes: ['a.b'],
      disabled: false,
    });

    const listed = (await (await api('/endpoints')).json()) as { endpoints: Array<Record<string, unknown>> };
    expect(listed.endpoints.find((endpoint) => endpoint.id === created.id)).not.toHaveProperty('secret');
    expect((await api(`/endpoints/${created.id}`, { token: 'tok_beta_0123456789abcdef0123456789' })).status).toBe(404);

    const patched = await api(`/endpoints/${created.id}`, { method: 'PATCH', body: JSON.stringify({ eventTypes: null, description: 'all events' }) });
    expect(await patched.json()).toMatchObject({ eventTypes: null, description: 'all events' });

    const rotated = (await (await api(`/endpoints/${created.id}/rotate-secret`, { method: 'POST' })).json()) as {
      secret: string;
      previousSecretExpiresAt: string;
    };
    expect(rotated.secret).not.toBe(created.secret);
    expect(new Date(rotated.previousSecretExpiresAt).getTime() - Date.now()).toBeGreaterThan(23 * 3600 * 1000);

    expect((await api(`/endpoints/${created.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/endpoints/${created.id}`)).status).toBe(404);
    expect((await api('/endpoints/ep_unknown', { method: 'PATCH', body: '{}' })).status).toBe(404);
  });

  it('signs with the old and the new secret for 24 h after a rotation', async () => {
    const endpoint = await startEndpointServer();
    const { id, secret: oldSecret } = await endpointFor(endpoint.url, { eventTypes: ['rotate.test'] });
    const { secret: newSecret } = (await (await api(`/endpoints/${id}/rotate-secret`, { method: 'POST' })).json()) as { secret: string };
    const { id: messageId } = (await (await publish(newKey(), { eventType: 'rotate.test', payload: {} })).json()) as { id: string };
    await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
    const [delivery] = endpoint.received;
    expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) expect(() => new Webhook(secret).verify(delivery!.body, delivery!.headers)).not.toThrow();
    await endpoint.close();
  });

  it.each([
    ['a string that is not a URL', 'not a url', /is not a URL/],
    ['an ftp URL', 'ftp://example.com/x', /must be http or https/],
    ['credentials in the URL', 'https://user:pw@example.com/x', /must not carry credentials/],
  ])('refuses %s', async (_reason, url, detail) => {
    const response = await api('/endpoints', { method: 'POST', body: JSON.stringify({ url }) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(detail);
  });
});
