import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { temporal } from '@temporalio/proto';
import type { Queryable } from '../../src/db/database';
import { loadBody } from '../../src/db/event-bodies';
import { BodyStoreUnavailableError } from '../../src/core/delivery-errors';
import { Router } from '../../src/flows';
import { ProviderKind } from '../../contracts';
import { EventIntake } from '../../src/intake/starter';
import { workflowExists } from '../../src/temporal/availability';
import { eventually } from '../support/eventually';
import { runCli } from '../support/processes';
import { githubHeaders, SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';
import { post, startStack, type Stack, type WorkerStack } from '../support/stack';

/** Temporal warns above this; no payload of any event may come near it. */
const TEMPORAL_PAYLOAD_WARNING_BYTES = 256 * 1024;

describe('a 20 MB GitHub delivery', () => {
  let stack: WorkerStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('is accepted, processed from the body store, keeps every Temporal payload small, and verifies again', async () => {
    const delivery = randomUUID();
    const title = `A very large issue ${randomUUID()}`;
    const body = JSON.stringify({
      action: 'opened',
      issue: { number: 7, title, html_url: 'https://github.com/acme/widgets/issues/7', user: { login: 'octocat' }, body: 'x'.repeat(20 * 1024 * 1024) },
      repository: { full_name: 'acme/widgets' },
    });
    const headers = await githubHeaders(body, SECRETS.github, { delivery, event: 'issues' });

    const response = await post(`${stack.url}/webhooks/github`, headers, body);
    expect(response.status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery).result()).toMatchObject({ outcome: 'notified' });

    // The notification was written from the stored body: the title never passed through Temporal.
    expect(stack.resend.emails.find((email) => email.subject.includes(title))).toMatchObject({
      subject: `[acme/widgets] Issue #7 opened: ${title}`,
      text: 'octocat opened https://github.com/acme/widgets/issues/7.',
    });
    const { events } = await stack.client.workflow.getHandle(delivery).fetchHistory();
    const sizes = events!.map((event) => temporal.api.history.v1.HistoryEvent.encode(event).finish().length);
    expect(Math.max(...sizes)).toBeLessThan(TEMPORAL_PAYLOAD_WARNING_BYTES / 16);
    expect(JSON.stringify(events)).not.toContain(title);

    const stored = await loadBody(stack.db, 'github', delivery);
    expect(stored).toMatchObject({
      size: Buffer.byteLength(body),
      sha256: createHash('sha256').update(body).digest('hex'),
      via: 'delivery',
      signatureHeaders: { 'x-hub-signature-256': headers['x-hub-signature-256'] },
    });
    expect(stored!.body!.equals(Buffer.from(body))).toBe(true);

    // `durable-webhooks events verify` checks the stored bytes with the receiver's secrets of today.
    const verify = async (env: Record<string, string>) => {
      const { code, output } = await runCli(['events', 'verify', delivery, '--json'], { ...stack.workerEnv, ...SECRETS_ENV, ...env });
      return { code, result: JSON.parse(output) as Record<string, unknown> };
    };
    expect(await verify({})).toEqual({ code: 0, result: expect.objectContaining({ eventId: delivery, verified: true, bytes: Buffer.byteLength(body) }) });
    // With the secret rotated away, the same bytes no longer verify.
    expect(await verify({ GITHUB_WEBHOOK_SECRET: 'another-secret', GITHUB_WEBHOOK_SECRET_PREVIOUS: '' })).toEqual({
      code: 1,
      result: expect.objectContaining({ verified: false, detail: expect.stringMatching(/does not match/) }),
    });
  });

  it('is stored once however often it is delivered, before its workflow starts', async () => {
    const event = stripeEvent();
    const body = JSON.stringify(event);
    const headers = stripeHeaders(body, SECRETS.stripe);
    const responses = await Promise.all(Array.from({ length: 5 }, () => post(`${stack.url}/webhooks/stripe`, headers, body)));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 202]);
    const { rows } = await stack.db.query<{ count: string }>('SELECT count(*) FROM event_bodies WHERE source = $1 AND event_id = $2', ['stripe', event.id]);
    expect(rows[0]!.count).toBe('1');
  });

  it('starts nothing when the body cannot be stored, and says 503', async () => {
    const unreachable: Queryable = { query: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) };
    const starter = new EventIntake(stack.client, unreachable, { acknowledge: 'temporal', taskQueue: stack.taskQueue });
    const event = stripeEvent();
    const raw = Buffer.from(JSON.stringify(event));
    const received = {
      source: 'stripe',
      provider: 'stripe' as const,
      id: event.id as string,
      type: 'checkout.session.completed',
      occurredAt: new Date().toISOString(),
      receivedAt: new Date().toISOString(),
      payload: event,
      body: { raw, contentType: 'application/json', signatureHeaders: {} },
    };
    const failure = await starter.start(received, { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE) }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BodyStoreUnavailableError);
    expect(failure).toMatchObject({ status: 503 });
    expect(await workflowExists(stack.client, event.id as string)).toBe(false);
  });
});

describe('large bodies in flight', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { LARGE_BODY_BYTES: '1024', MAX_LARGE_BODIES_IN_FLIGHT: '1' } });
  });
  afterAll(() => stack.close());

  function signed(padding: number) {
    const body = JSON.stringify(stripeEvent({ padding: 'x'.repeat(padding) }));
    return { body, headers: stripeHeaders(body, SECRETS.stripe) };
  }

  it('answers one large body beyond the limit 503 with Retry-After, unread, while small ones go through', async () => {
    // A large body that trickles in holds the one slot.
    const { port } = new URL(stack.url);
    const slow = connect(Number(port), '127.0.0.1');
    const held = signed(4096);
    const headerLines = Object.entries({ ...held.headers, 'content-length': String(Buffer.byteLength(held.body)) }).map(([name, value]) => `${name}: ${value}`);
    slow.write(`POST /webhooks/stripe HTTP/1.1\r\nhost: localhost\r\n${headerLines.join('\r\n')}\r\n\r\n${held.body.slice(0, 100)}`);

    // Each try is a new event: one that got in before the held body took the slot is simply started.
    const postLarge = () => {
      const large = signed(4096);
      return post(`${stack.url}/webhooks/stripe`, large.headers, large.body);
    };
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    await eventually('the held body takes the slot', async () => (refused = await postLarge()).status === 503);
    expect(refused!.status).toBe(503);
    expect(refused!.headers.get('retry-after')).toBe('5');
    expect(refused!.json).toMatchObject({ type: 'urn:durable-webhooks:problem:too-many-large-bodies', limit: 1 });

    const small = signed(10);
    expect((await post(`${stack.url}/webhooks/stripe`, small.headers, small.body)).status).toBe(202);

    slow.destroy();
    await eventually('the slot is free again', async () => (await postLarge()).status === 202);
  });
});

describe('slow senders', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The defaults: 8 large bodies at once, 2 from one address, 16 KiB/s after 5 s, REQUEST_TIMEOUT 30 s.
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  /** A request that declares 20 MB (to GitHub, whose limit is 25 MiB) and sends a byte every 200 ms; resolves with the status line and when it came. */
  function trickle(port: number) {
    const began = Date.now();
    const socket = connect(port, '127.0.0.1');
    socket.write(
      `POST /webhooks/github HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nx-github-event: ping\r\nx-github-delivery: slow\r\nx-hub-signature-256: sha256=${'0'.repeat(64)}\r\ncontent-length: ${20 * 1024 * 1024}\r\n\r\n`,
    );
    const drip = setInterval(() => socket.writable && socket.write(' '), 200);
    return new Promise<{ status: number; seconds: number }>((resolve) => {
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), seconds: (Date.now() - began) / 1000 });
      });
    });
  }

  /** A signed 200 KiB delivery from another client address (127.0.0.2). */
  function largeFromElsewhere(port: number) {
    const body = JSON.stringify(stripeEvent({ padding: 'x'.repeat(200 * 1024) }));
    const headers = { ...stripeHeaders(body, SECRETS.stripe), 'content-length': String(Buffer.byteLength(body)) };
    return new Promise<number>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, localAddress: '127.0.0.2', method: 'POST', path: '/webhooks/stripe', headers }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  it("eight slow senders hold no more than their address's share, are cut once they cannot finish in time, and a 200 KiB delivery still gets 202", async () => {
    const port = Number(new URL(stack.url).port);
    const slow = Array.from({ length: 8 }, () => trickle(port));
    expect(await largeFromElsewhere(port)).toBe(202);

    const answers = await Promise.all(slow);
    // Two got their address's share of the slots and were cut by their pace, long before REQUEST_TIMEOUT (30 s);
    // six were refused at once, unread.
    expect(answers.map((answer) => answer.status).sort()).toEqual([408, 408, 429, 429, 429, 429, 429, 429]);
    for (const answer of answers) expect(answer.seconds).toBeLessThan(answer.status === 408 ? 10 : 2);
    expect(await largeFromElsewhere(port)).toBe(202);
  });
});
