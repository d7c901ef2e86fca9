import { createServer } from 'node:http';
import pino from 'pino';
import { createMetrics, serveMetrics } from '../../src/http/metrics';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import examples from '@octokit/webhooks-examples';
import { githubHeaders, SECRETS, standardHeaders, stripeEvent, stripeHeaders } from '../support/signing';
import { orderCreated } from '../support/events';
import { freePort } from '../support/ports';
import { post, runsOf, startStack, type WorkerStack } from '../support/stack';

const issueOpened = examples.find((group) => group.name === 'issues')!.examples.find((example) => (example as { action?: string }).action === 'opened')!;

const connectConfig = () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-')), 'webhooks.yaml');
  writeFileSync(
    file,
    'sources:\n  - name: stripe-connect\n    kind: stripe\n    secret: whsec_connect_test\n    workflowIdPrefix: "connect:"\n' +
      `  - name: partner\n    kind: standard-webhooks\n    secret: ${SECRETS.standard}\n    workflowIdPrefix: "partner:"\n`,
  );
  return file;
};

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_BODY_BYTES: String(64 * 1024), WEBHOOKS_CONFIG: connectConfig() } });
});
afterAll(() => stack.close());

function signedStripe(overrides: Record<string, unknown> = {}, secret = SECRETS.stripe) {
  const event = stripeEvent(overrides);
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, secret) };
}

describe('POST /webhooks/stripe', () => {
  it('starts one workflow whose ID is the event ID (202), and answers a second copy 200 duplicate', async () => {
    const { id, body, headers } = signedStripe();

    const first = await post(`${stack.url}/webhooks/stripe`, headers, body);
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ status: 'started', eventId: id, workflowId: id, runId: expect.any(String) });

    const second = await post(`${stack.url}/webhooks/stripe`, headers, body);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ status: 'duplicate', eventId: id, workflowId: id, state: expect.stringMatching(/^(running|completed)$/) });

    const handle = stack.client.workflow.getHandle(id);
    expect(await handle.result()).toMatchObject({ outcome: 'fulfilled', source: 'stripe', eventId: id, type: 'checkout.session.completed' });
    expect(await runsOf(stack.client, id)).toEqual([first.json!.runId]);

    const third = await post(`${stack.url}/webhooks/stripe`, headers, body);
    expect(third.json).toEqual({ status: 'duplicate', eventId: id, workflowId: id, state: 'completed' });
  });

  it('tags the workflow with WebhookSource, WebhookEventType and a readable summary', async () => {
    const { id, body, headers } = signedStripe({ type: 'checkout.session.completed' });
    expect((await post(`${stack.url}/webhooks/stripe`, headers, body)).status).toBe(202);
    const description = await stack.client.workflow.getHandle(id).describe();
    expect(description.searchAttributes).toMatchObject({
      WebhookSource: ['stripe'],
      WebhookEventType: ['checkout.session.completed'],
      WebhookVia: ['delivery'],
    });
    expect(await description.staticSummary()).toBe('stripe · checkout.session.completed · cs_test_123 · 42.00 EUR');
    expect(description.taskQueue).toBe(stack.taskQueue);
  });

  it('accepts 50 concurrent copies of one event as exactly one 202 and 49 duplicates, with one execution', async () => {
    const { id, body, headers } = signedStripe();
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(`${stack.url}/webhooks/stripe`, headers, body)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(49);
    await stack.client.workflow.getHandle(id).result();
    expect(await runsOf(stack.client, id)).toHaveLength(1);
  });

  it('accepts an event signed with the older of two rotated secrets', async () => {
    const { id, body, headers } = signedStripe({}, SECRETS.stripeRotated);
    expect((await post(`${stack.url}/webhooks/stripe`, headers, body)).json).toMatchObject({ status: 'started', eventId: id });
  });
});

describe('POST /webhooks/github', () => {
  it('takes a real issues.opened payload from @octokit/webhooks-examples through to a completed workflow', async () => {
    const delivery = randomUUID();
    const body = JSON.stringify(issueOpened);
    const response = await post(`${stack.url}/webhooks/github`, await githubHeaders(body, SECRETS.github, { delivery, event: 'issues' }), body);
    expect(response.status).toBe(202);
    expect(response.json).toMatchObject({ status: 'started', eventId: delivery, workflowId: delivery });
    expect(await stack.client.workflow.getHandle(delivery).result()).toMatchObject({ outcome: 'notified', source: 'github', type: 'issues.opened' });
  });

  it('accepts a form-encoded delivery', async () => {
    const delivery = randomUUID();
    const form = new URLSearchParams({ payload: JSON.stringify({ zen: 'Design for failure.', hook_id: 7 }) }).toString();
    const headers = await githubHeaders(form, SECRETS.github, { delivery, event: 'ping', contentType: 'application/x-www-form-urlencoded' });
    expect((await post(`${stack.url}/webhooks/github`, headers, form)).json).toMatchObject({ status: 'started', eventId: delivery });
  });
});

describe('POST /webhooks/standard', () => {
  it('starts the workflow under the webhook-id; a type no flow handles is recorded as ignored', async () => {
    const id = `msg_${randomUUID()}`;
    const body = JSON.stringify({ type: 'order.shipped', timestamp: new Date().toISOString(), data: { orderId: 'ord_1' } });
    const response = await post(`${stack.url}/webhooks/standard`, standardHeaders(body, SECRETS.standard, { id }), body);
    expect(response.status).toBe(202);
    expect(await stack.client.workflow.getHandle(id).result()).toMatchObject({ outcome: 'ignored', source: 'standard', type: 'order.shipped' });
  });
});

describe('sources from WEBHOOKS_CONFIG', () => {
  it('serves POST /webhooks/<name> with its own secret, and prefixes the workflow ID', async () => {
    const { id, body, headers } = signedStripe({}, 'whsec_connect_test');
    const response = await post(`${stack.url}/webhooks/stripe-connect`, headers, body);
    expect(response.json).toEqual({ status: 'started', eventId: id, workflowId: `connect:${id}`, runId: expect.any(String) });
    expect(await stack.client.workflow.getHandle(`connect:${id}`).result()).toMatchObject({ source: 'stripe-connect', eventId: id });
    // The built-in stripe source does not accept the other source's secret.
    expect((await post(`${stack.url}/webhooks/stripe`, headers, body)).status).toBe(400);
  });

  it("keeps two sources' events with one event ID apart downstream: each order is charged under its own Idempotency-Key", async () => {
    const first = orderCreated();
    const second = orderCreated({ amount: 5100 });
    const sameId = standardHeaders(second.body, SECRETS.standard, { id: first.id });
    expect((await post(`${stack.url}/webhooks/standard`, first.headers, first.body)).status).toBe(202);
    expect((await post(`${stack.url}/webhooks/partner`, sameId, second.body)).status).toBe(202);

    expect(await stack.client.workflow.getHandle(first.id).result()).toMatchObject({ outcome: 'charged' });
    expect(await stack.client.workflow.getHandle(`partner:${first.id}`).result()).toMatchObject({ outcome: 'charged' });
    const charges = stack.stripe.charges().filter((intent) => [first.orderId, second.orderId].includes(intent.metadata.order_id!));
    expect(charges.map((intent) => intent.amount).sort()).toEqual([4200, 5100]);
  });
});

describe('operational routes', () => {
  it('keeps /admin off (404) when ADMIN_TOKEN is unset', async () => {
    expect((await fetch(`${stack.url}/admin/events`, { headers: { authorization: 'Bearer anything' } })).status).toBe(404);
  });

  it('GET /healthz and /readyz answer 200 while Temporal is up', async () => {
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('GET /metrics counts deliveries by source and outcome', async () => {
    const count = async (outcome: string) => {
      const metrics = await (await fetch(stack.metricsUrl)).text();
      return Number(new RegExp(`webhook_deliveries_total\\{source="stripe",outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    };
    const outcomes = ['started', 'duplicate', 'invalid-signature'];
    const before = await Promise.all(outcomes.map(count));
    const { body, headers } = signedStripe();
    await post(`${stack.url}/webhooks/stripe`, headers, body);
    await post(`${stack.url}/webhooks/stripe`, headers, body);
    await post(`${stack.url}/webhooks/stripe`, { ...headers, 'stripe-signature': 't=1,v1=00' }, body);
    const after = await Promise.all(outcomes.map(count));
    expect(after.map((value, index) => value - before[index]!)).toEqual([1, 1, 1]);
  });

  it('serves /metrics only on its own address, not on the webhook port', async () => {
    expect((await fetch(`${stack.url}/metrics`)).status).toBe(404);
    expect(new URL(stack.metricsUrl).port).not.toBe(new URL(stack.url).port);
    expect(new URL(stack.metricsUrl).hostname).toBe('127.0.0.1');
  });

  it('takes the next free port when the metrics port is busy, and logs it; a receiver never fails for it', async () => {
    // A port whose next one is free too, from below the ephemeral range (test/support/ports.ts).
    const port = await freePort(1);
    const busy = createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => busy.once('listening', resolve));
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const served = await serveMetrics(createMetrics(), `127.0.0.1:${port}`, logger);
    expect(served.address).toBe(`127.0.0.1:${port + 1}`);
    expect(lines.join('')).toContain(`metrics port ${port} is busy; serving metrics on ${port + 1}`);
    served.server.close();
    busy.close();
  });
});
