import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { prepareNamespace } from '../../src/temporal/namespace';
import { eventually } from '../support/eventually';
import { SECRETS, stripeEvent, stripeHeaders } from '../support/signing';
import { freePort } from '../support/ports';
import { workflowExists } from '../../src/temporal/availability';
import { post, startStack, type Stack } from '../support/stack';

/**
 * A dev server of this file's own (as `npm run dev` starts it), on a fixed port and SQLite file, so
 * it can be stopped and started again while the receiver keeps running. Each start waits for the
 * server up to a minute, as `npm run dev` does: on a new machine's CI the Go builds share its cores.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'dw-outage-'));
let port: number;
let server: DevServer | undefined;
let stack: Stack;

async function startServer(): Promise<void> {
  server = await startDevServer({ address: `127.0.0.1:${port}`, dataDir, stdio: 'ignore' });
  const connection = await Connection.connect({ address: server.address, connectTimeout: '60s' });
  await prepareNamespace(connection, 'default');
  await connection.close();
}

async function stopServer(): Promise<void> {
  await server?.stop();
  server = undefined;
}

/** Polls /readyz, as a load balancer would, until the receiver reaches Temporal again. */
function untilReady(url: string): Promise<void> {
  return eventually('the receiver reports ready', async () => (await fetch(`${url}/readyz`)).status === 200, { timeoutMs: 30_000, intervalMs: 250 });
}

function signedStripe() {
  const event = stripeEvent();
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, SECRETS.stripe) };
}

beforeAll(async () => {
  // The Web UI takes the port 1000 above.
  port = await freePort(1000);
  await startServer();
  stack = await startStack({ address: `127.0.0.1:${port}`, worker: false });
});

afterAll(async () => {
  await stack.close();
  await stopServer();
});

describe('the receiver while Temporal is down', () => {
  it('answers 503 with Retry-After, never 2xx, then accepts the same delivery once Temporal is back; earlier events survive the restart', async () => {
    const before = signedStripe();
    expect((await post(`${stack.url}/webhooks/stripe`, before.headers, before.body)).status).toBe(202);

    await stopServer();

    const during = signedStripe();
    const refused = await post(`${stack.url}/webhooks/stripe`, during.headers, during.body);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.json).toMatchObject({ status: 503, type: 'urn:durable-webhooks:problem:temporal-unavailable', eventId: during.id });
    expect((await fetch(`${stack.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);

    await startServer();
    await untilReady(stack.url);

    const retried = await post(`${stack.url}/webhooks/stripe`, during.headers, during.body);
    expect(retried.status).toBe(202);
    expect(retried.json).toMatchObject({ status: 'started', eventId: during.id });

    expect(await workflowExists(stack.client, before.id)).toBe(true);
    const again = await post(`${stack.url}/webhooks/stripe`, before.headers, before.body);
    expect(again.json).toEqual({ status: 'duplicate', eventId: before.id, workflowId: before.id, state: expect.stringMatching(/^(running|completed)$/) });
  });
});
