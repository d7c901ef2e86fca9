import type { StripeEvent } from '../../src/dev/stripe-objects';
import { checkoutCompleted } from '../support/events';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '../support/eventually';
import { createGitHubClient, gitHubDeliveries } from '../../src/backfill/github';
import { workflowExists } from '../../src/temporal/availability';
import { startGitHubStandIn } from '../support/github-stand-in';
import { runCli } from '../support/processes';
import { startPaddleStandIn, type PaddleEvent } from '../support/paddle-stand-in';
import { startSquareStandIn, type SquareEvent } from '../support/square-stand-in';
import { CATALOG_SECRETS, CATALOG_SECRETS_ENV, githubHeaders, paddleHeaders, SECRETS, squareHeaders } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * `durable-webhooks backfill stripe|github`, against stand-ins of Stripe's Events API and GitHub's
 * deliveries API through the real `stripe` and `@octokit/rest` clients, with the dev server, a worker
 * and PostgreSQL: events that never arrived are started once, everything Temporal or the ledger has
 * is reported, never started again.
 */
const GITHUB_TOKEN = 'ghp_backfill_test';
const HOOK = 'repos/octo/shop/hooks/42';
let stack: WorkerStack;
let github: Awaited<ReturnType<typeof startGitHubStandIn>>;
const PADDLE_API_KEY = 'pdl_live_apikey_backfill_test';
let paddle: Awaited<ReturnType<typeof startPaddleStandIn>>;
const SQUARE_ACCESS_TOKEN = 'EAAAl_backfill_test';
let square: Awaited<ReturnType<typeof startSquareStandIn>>;
const ADMIN_TOKEN = 'admin-backfill-token-0123456789abcdef0123456789';
beforeAll(async () => {
  github = await startGitHubStandIn({ token: GITHUB_TOKEN });
  paddle = await startPaddleStandIn({ apiKey: PADDLE_API_KEY });
  square = await startSquareStandIn({ token: SQUARE_ACCESS_TOKEN });
  stack = await startStack({ env: { ...CATALOG_SECRETS_ENV, ADMIN_TOKEN, GITHUB_TOKEN, GITHUB_API_URL: github.url, GITHUB_HOOKS: HOOK } });
  github.setTarget(HOOK, { url: `${stack.url}/webhooks/github`, secret: SECRETS.github });
});
afterAll(async () => {
  await github?.close();
  await paddle?.close();
  await square?.close();
  await stack.close();
});

const env = (extra: NodeJS.ProcessEnv = {}) => ({
  STRIPE_SECRET_KEY: 'sk_test_backfill',
  STRIPE_API_URL: stack.stripe.url,
  TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
  TEMPORAL_TASK_QUEUE: stack.taskQueue,
  DATABASE_URL: stack.workerEnv.DATABASE_URL,
  ...extra,
});
const backfill = async (args: string[], extra?: NodeJS.ProcessEnv, provider = 'stripe') => {
  const { code, output } = await runCli(
    ['backfill', provider, ...args, '--json'],
    env({
      GITHUB_TOKEN,
      GITHUB_API_URL: github.url,
      GITHUB_HOOKS: HOOK,
      PADDLE_API_KEY,
      PADDLE_API_URL: paddle.url,
      SQUARE_ACCESS_TOKEN,
      SQUARE_API_URL: square.url,
      ...extra,
    }),
  );
  // stdout's JSON lines; a retried request's log line (stderr) is not one of them.
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { eventId?: string; outcome?: string; counts?: Record<string, number> });
  return { code, lines: lines.filter((line) => line.eventId), counts: lines.at(-1)!.counts! };
};
/** A Stripe event of its own type, `created` seconds ago, as the Events API lists it. */
const eventOf = (type: string, secondsAgo = 60): StripeEvent => {
  const event = JSON.parse(checkoutCompleted().body) as StripeEvent;
  return { ...event, type, created: Math.floor(Date.now() / 1000) - secondsAgo };
};

describe('stripe', () => {
  it('starts what never arrived once, reports what arrived by webhook, and a second run starts nothing', async () => {
    const missed = Array.from({ length: 50 }, () => eventOf('checkout.session.completed'));
    const delivered = checkoutCompleted();
    expect((await post(`${stack.url}/webhooks/stripe`, delivered.headers, delivered.body)).status).toBe(202);
    stack.stripe.addEvents(...missed, JSON.parse(delivered.body) as StripeEvent);
    const ours = [...missed.map((event) => event.id), delivered.id];
    const only = (lines: Array<{ eventId?: string; outcome?: string }>) => lines.filter((line) => ours.includes(line.eventId!));

    const first = await backfill(['--since', '1h', '--types', 'checkout.session.completed']);
    expect(first.code).toBe(0);
    const outcomes = Object.fromEntries(only(first.lines).map((line) => [line.eventId, line.outcome]));
    expect(outcomes[delivered.id]).toBe('already recorded');
    expect(missed.map((event) => outcomes[event.id])).toEqual(Array(50).fill('started'));
    for (const event of missed) expect(await stack.client.workflow.getHandle(event.id).result()).toMatchObject({ outcome: 'fulfilled', source: 'stripe' });
    expect((await stack.client.workflow.getHandle(missed[0]!.id).describe()).searchAttributes).toMatchObject({
      WebhookVia: ['backfill'],
      WebhookSource: ['stripe'],
    });
    // What reconciliation caught, as an operator lists it.
    await eventually('visibility lists the backfilled events', async () => {
      const { output } = await runCli(['events', 'list', '--via', 'backfill', '--source', 'stripe', '--limit', '1000', '--json'], env());
      const listed = new Set((JSON.parse(output) as Array<{ eventId: string }>).map((event) => event.eventId));
      return missed.every((event) => listed.has(event.id)) && !listed.has(delivered.id);
    });

    const second = await backfill(['--since', '1h', '--types', 'checkout.session.completed']);
    expect(only(second.lines).map((line) => line.outcome)).toEqual(Array(51).fill('already recorded'));
    expect(second.counts).toMatchObject({ started: 0, failed: 0 });
    expect(stack.resend.emails.filter((email) => ours.includes(email.idempotencyKey!))).toHaveLength(51);
  });

  it("reports an event Temporal has forgotten after retention as already recorded, from the ledger's claim, and starts nothing", async () => {
    // What retention leaves behind: the ledger's claim of a processed event, and no workflow in Temporal.
    const event = eventOf('customer.created');
    stack.stripe.addEvents(event);
    await stack.db.query(
      `INSERT INTO processed_events (source, event_id, event_type, workflow_id, first_execution_run_id, status) VALUES ('stripe', $1, $2, $1, 'run-forgotten', 'completed')`,
      [event.id, event.type],
    );

    const again = await backfill(['--since', '1h', '--types', 'customer.created']);
    expect(again.lines.find((line) => line.eventId === event.id)?.outcome).toBe('already recorded');
    await expect(stack.client.workflow.getHandle(event.id).describe()).rejects.toThrow();
  });

  it('pages through 250 events (100 a page, starting_after) in a dry run, starting nothing', async () => {
    const events = Array.from({ length: 250 }, (_, index) => eventOf('invoice.finalized', 100 + index));
    stack.stripe.addEvents(...events);
    const dryRun = await backfill(['--since', '2h', '--types', 'invoice.finalized', '--dry-run']);
    expect(dryRun.lines).toHaveLength(250);
    expect(new Set(dryRun.lines.map((line) => line.eventId))).toEqual(new Set(events.map((event) => event.id)));
    expect(dryRun.counts).toEqual({ found: 250, alreadyRecorded: 0, started: 250, failed: 0 });
    expect(dryRun.lines.every((line) => line.outcome === 'would start')).toBe(true);
    const pages = stack.stripe.requests.filter((request) => request.path === '/v1/events' && request.params['types[0]'] === 'invoice.finalized');
    expect(pages.map((request) => request.params.starting_after === undefined)).toEqual([true, false, false]);
    await expect(stack.client.workflow.getHandle(events[0]!.id).describe()).rejects.toThrow();
  });

  it('lists only the window: --since and --until by created', async () => {
    const old = eventOf('payout.paid', 3 * 3600);
    const recent = eventOf('payout.paid', 60);
    stack.stripe.addEvents(old, recent);
    const window = await backfill(['--since', '2h', '--types', 'payout.paid', '--dry-run']);
    expect(window.lines.map((line) => line.eventId)).toEqual([recent.id]);
    const earlier = await backfill(['--since', '4h', '--until', '2h', '--types', 'payout.paid', '--dry-run']);
    expect(earlier.lines.map((line) => line.eventId)).toEqual([old.id]);
  });

  it('--source backfills into a Stripe source from WEBHOOKS_CONFIG: its workflow-ID prefix and its own API key', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-backfill-')), 'webhooks.yaml');
    writeFileSync(
      file,
      'sources:\n  - name: stripe-connect\n    kind: stripe\n    secretEnv: CONNECT_WEBHOOK_SECRET\n    workflowIdPrefix: "connect:"\n    apiKeyEnv: CONNECT_API_KEY\n',
    );
    const event = eventOf('account.updated');
    stack.stripe.addEvents(event);
    // The default key is refused, so a success shows the source's own key was used.
    stack.stripe.revokeApiKey('sk_test_not_the_connect_key');
    const sourceEnv = {
      WEBHOOKS_CONFIG: file,
      CONNECT_WEBHOOK_SECRET: 'whsec_connect',
      CONNECT_API_KEY: 'sk_test_connect',
      STRIPE_SECRET_KEY: 'sk_test_not_the_connect_key',
    };

    const result = await backfill(['--since', '1h', '--types', 'account.updated', '--source', 'stripe-connect'], sourceEnv);
    expect(result.lines).toEqual([{ eventId: event.id, type: 'account.updated', outcome: 'started' }]);
    expect(await stack.client.workflow.getHandle(`connect:${event.id}`).result()).toMatchObject({
      source: 'stripe-connect',
      eventId: event.id,
      outcome: 'ignored',
    });
    expect((await backfill(['--since', '1h', '--types', 'account.updated', '--source', 'stripe-connect'], sourceEnv)).lines[0]!.outcome).toBe(
      'already recorded',
    );

    expect(await runCli(['backfill', 'stripe', '--since', '1h', '--source', 'shopify'], env(sourceEnv))).toMatchObject({
      code: 1,
      error: expect.stringContaining('No Stripe source named "shopify" in WEBHOOKS_CONFIG.'),
    });
    expect(await runCli(['backfill', 'stripe', '--since', '1h', '--source', 'stripe-connect'], env({ ...sourceEnv, CONNECT_API_KEY: '' }))).toMatchObject({
      code: 1,
      error: expect.stringContaining('Source "stripe-connect" has no API key: give it "apiKeyEnv" in WEBHOOKS_CONFIG'),
    });
  });

  it('retries 429 and 5xx with backoff; a revoked key and a window beyond 30 days are clear errors', async () => {
    stack.stripe.addEvents(eventOf('charge.refunded'));
    stack.stripe.failNext(429, 500);
    const retried = await backfill(['--since', '1h', '--types', 'charge.refunded', '--dry-run']);
    expect(retried.counts).toMatchObject({ found: 1, failed: 0 });

    stack.stripe.revokeApiKey('sk_test_revoked');
    expect(await runCli(['backfill', 'stripe', '--since', '1h'], env({ STRIPE_SECRET_KEY: 'sk_test_revoked' }))).toMatchObject({
      code: 1,
      error: expect.stringContaining('Stripe refused the API key (STRIPE_SECRET_KEY): Invalid API Key provided'),
    });
    expect(await runCli(['backfill', 'stripe', '--since', '31d'], env())).toMatchObject({
      code: 1,
      error: expect.stringContaining('further back than the 30 days Stripe keeps events'),
    });
    expect(await runCli(['backfill', 'stripe', '--since', '1h'], env({ STRIPE_SECRET_KEY: '' }))).toMatchObject({
      code: 1,
      error: expect.stringContaining('needs STRIPE_SECRET_KEY'),
    });
  });
});

describe('github', () => {
  const issue = (title: string) => ({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'octo/shop' } });
  const notifiedAbout = (title: string) => stack.resend.emails.filter((email) => email.subject.endsWith(`: ${title}`));

  it('fetches and starts each delivery GUID not recorded (once, however often it was redelivered); a second run starts nothing', async () => {
    const run = randomUUID();
    const missed = Array.from({ length: 20 }, (_, index) => github.addDelivery(HOOK, { event: 'issues', payload: issue(`${run} missed ${index}`) }));
    github.addDelivery(HOOK, { event: 'issues', payload: issue(`${run} missed 0`), guid: missed[0] });
    const arrivedPayload = issue(`${run} arrived`);
    const arrived = github.addDelivery(HOOK, { event: 'issues', payload: arrivedPayload });
    const body = JSON.stringify(arrivedPayload);
    expect((await post(`${stack.url}/webhooks/github`, await githubHeaders(body, SECRETS.github, { delivery: arrived, event: 'issues' }), body)).status).toBe(
      202,
    );
    await stack.client.workflow.getHandle(arrived).result();

    const first = await backfill(['--since', '1h'], {}, 'github');
    expect(first.code).toBe(0);
    const outcomes = Object.fromEntries(first.lines.map((line) => [line.eventId, line.outcome]));
    expect(missed.map((guid) => outcomes[guid])).toEqual(Array(20).fill('started'));
    expect(outcomes[arrived]).toBe('already recorded');
    expect(first.lines.filter((line) => line.eventId === missed[0])).toHaveLength(1);
    for (const guid of missed)
      expect(await stack.client.workflow.getHandle(guid).result()).toMatchObject({ outcome: 'notified', source: 'github', type: 'issues.opened' });

    const second = await backfill(['--since', '1h'], {}, 'github');
    expect(second.lines.filter((line) => [...missed, arrived].includes(line.eventId!)).every((line) => line.outcome === 'already recorded')).toBe(true);
    expect(second.counts.started).toBe(0);
    for (let index = 0; index < 20; index++) expect(notifiedAbout(`${run} missed ${index}`)).toHaveLength(1);
  });

  it('does not follow a pagination link to another host with the token', async () => {
    const other = await startGitHubStandIn({ token: GITHUB_TOKEN });
    const hook = 'repos/octo/elsewhere/hooks/7';
    for (let index = 0; index < 101; index++) other.addDelivery(hook, { event: 'ping', payload: { zen: `page ${index}` } });
    // A link to another address: were it followed, the token would go with it.
    const { port } = new URL(other.url);
    other.setLinkHost(`127.0.0.2:${port}`);
    try {
      const listed: string[] = [];
      const listing = (async () => {
        for await (const event of gitHubDeliveries(createGitHubClient(GITHUB_TOKEN, other.url), [hook], new Date(0))) listed.push(event.id);
      })();
      await expect(listing).rejects.toThrow(
        `GitHub's API sent a link to http://127.0.0.2:${port}, not http://127.0.0.1:${port} (GITHUB_API_URL); it is not followed with the token.`,
      );
      expect(listed).toHaveLength(100);
    } finally {
      await other.close();
    }
  });

  it('--redeliver asks GitHub to deliver the missing ones again, signed, to the receiver', async () => {
    const run = randomUUID();
    const missed = [github.addDelivery(HOOK, { event: 'issues', payload: issue(`${run} redelivered`) })];
    const result = await backfill(['--since', '1h', '--redeliver'], {}, 'github');
    expect(result.lines.find((line) => line.eventId === missed[0])?.outcome).toBe('redelivery requested');
    await eventually('the redelivery reaches the receiver', () =>
      stack.client.workflow
        .getHandle(missed[0]!)
        .describe()
        .then(
          () => true,
          () => false,
        ),
    );
    expect(await stack.client.workflow.getHandle(missed[0]!).result()).toMatchObject({ outcome: 'notified' });
    expect(github.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/attempts'))).not.toEqual([]);
  });

  it('pages through 250 deliveries with the Link header cursor, in a dry run, and stops at --since', async () => {
    const hook = 'orgs/octo/hooks/7';
    const now = Date.now();
    const recent = Array.from({ length: 250 }, (_, index) =>
      github.addDelivery(hook, { event: 'ping', payload: { zen: `${index}`, hook_id: 7 }, deliveredAt: new Date(now - index * 1000) }),
    );
    github.addDelivery(hook, { event: 'ping', payload: { zen: 'old', hook_id: 7 }, deliveredAt: new Date(now - 3 * 3600_000) });
    const dryRun = await backfill(['--since', '1h', '--dry-run'], { GITHUB_HOOKS: hook }, 'github');
    expect(dryRun.lines.map((line) => line.eventId)).toEqual(recent);
    expect(dryRun.counts).toEqual({ found: 250, alreadyRecorded: 0, started: 250, failed: 0 });
    expect(github.requests.filter((request) => request.method === 'GET' && request.path === `/${hook}/deliveries`)).toHaveLength(3);
  });

  it('retries a 503; a refused token and a bad GITHUB_HOOKS are clear errors', async () => {
    github.failNext(503);
    expect((await backfill(['--since', '1h', '--dry-run'], {}, 'github')).code).toBe(0);
    expect(
      await runCli(['backfill', 'github', '--since', '1h'], env({ GITHUB_TOKEN: 'ghp_wrong', GITHUB_API_URL: github.url, GITHUB_HOOKS: HOOK })),
    ).toMatchObject({
      code: 1,
      error: expect.stringContaining(`GitHub refused the token (GITHUB_TOKEN) for ${HOOK}: Bad credentials`),
    });
    expect(await runCli(['backfill', 'github', '--since', '1h'], env({ GITHUB_TOKEN, GITHUB_API_URL: github.url, GITHUB_HOOKS: 'octo/shop' }))).toMatchObject({
      code: 1,
      error: expect.stringContaining('GITHUB_HOOKS lists "octo/shop"'),
    });
  });
});

describe('paddle', () => {
  let sequence = 0;
  /** A Paddle event `secondsAgo` old; its ID sorts by time, as Paddle's do. */
  const paddleEvent = (secondsAgo: number, type = 'transaction.completed'): PaddleEvent => {
    const at = Date.now() - secondsAgo * 1000;
    return {
      event_id: `evt_${String(at).padStart(15, '0')}${String(sequence++).padStart(6, '0')}`,
      event_type: type,
      occurred_at: new Date(at).toISOString(),
      data: { id: `txn_${randomUUID()}`, status: 'completed' },
    };
  };

  it('starts what never arrived once, down to --since, reports what arrived by webhook, and a second run starts nothing', async () => {
    const missed = Array.from({ length: 250 }, (_, index) => paddleEvent(600 + index, 'subscription.activated'));
    const delivered = paddleEvent(300, 'subscription.activated');
    const tooOld = paddleEvent(3 * 3600, 'subscription.activated');
    const body = JSON.stringify(delivered);
    expect((await post(`${stack.url}/webhooks/paddle`, paddleHeaders(body, [CATALOG_SECRETS.paddle], Math.floor(Date.now() / 1000)), body)).status).toBe(202);
    paddle.addEvents(...missed, delivered, tooOld);

    const first = await backfill(['--since', '2h', '--types', 'subscription.activated'], {}, 'paddle');
    expect(first.code).toBe(0);
    const outcomes = Object.fromEntries(first.lines.map((line) => [line.eventId, line.outcome]));
    expect(outcomes[delivered.event_id]).toBe('already recorded');
    expect(missed.map((event) => outcomes[event.event_id])).toEqual(Array(250).fill('started'));
    expect(outcomes[tooOld.event_id]).toBeUndefined();
    expect(first.counts).toEqual({ found: 251, alreadyRecorded: 1, started: 250, failed: 0 });
    // Two pages of 200, newest first, the second from the first's `next` link.
    expect(paddle.requests.slice(-2).map((request) => [request.query.order_by, request.query.per_page, request.query.after !== undefined])).toEqual([
      ['id[DESC]', '200', false],
      ['id[DESC]', '200', true],
    ]);

    const handle = stack.client.workflow.getHandle(missed[0]!.event_id);
    expect(await handle.result()).toMatchObject({ source: 'paddle', type: 'subscription.activated' });
    expect((await handle.describe()).searchAttributes).toMatchObject({ WebhookSource: ['paddle'], WebhookVia: ['backfill'] });

    const second = await backfill(['--since', '2h', '--types', 'subscription.activated'], {}, 'paddle');
    expect(second.counts).toEqual({ found: 251, alreadyRecorded: 251, started: 0, failed: 0 });
  });

  it('retries a 503; a refused key, a missing key and a next page on another host are clear errors', async () => {
    const event = paddleEvent(60, 'customer.created');
    paddle.addEvents(event);
    paddle.failNext(503);
    const retried = await backfill(['--since', '1h', '--types', 'customer.created'], {}, 'paddle');
    expect(retried.counts).toMatchObject({ found: 1, started: 1 });

    const refused = await runCli(['backfill', 'paddle', '--since', '1h'], env({ PADDLE_API_KEY: 'pdl_live_apikey_revoked', PADDLE_API_URL: paddle.url }));
    expect(refused.code).toBe(1);
    expect(refused.error).toMatch(/Paddle refused the API key \(PADDLE_API_KEY\): 403/);

    const missing = await runCli(['backfill', 'paddle', '--since', '1h'], env({ PADDLE_API_KEY: '', PADDLE_API_URL: paddle.url }));
    expect(missing).toMatchObject({ code: 1, error: 'A Paddle backfill needs PADDLE_API_KEY (an API key with permission to read events).' });

    paddle.addEvents(...Array.from({ length: 201 }, () => paddleEvent(30, 'address.created')));
    paddle.pointNextAt('http://127.0.0.2:9');
    try {
      const elsewhere = await runCli(
        ['backfill', 'paddle', '--since', '1h', '--types', 'address.created', '--dry-run'],
        env({ PADDLE_API_KEY, PADDLE_API_URL: paddle.url }),
      );
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.error).toMatch(
        /pointed the next page at http:\/\/127\.0\.0\.2:9, not http:\/\/127\.0\.0\.1:\d+; the listing stops rather than send the API key there/,
      );
    } finally {
      paddle.pointNextAt(undefined);
    }
  });
});

describe('square', () => {
  /** A Square event `secondsAgo` old, as the Events API lists it. */
  const squareEvent = (secondsAgo: number, type = 'payment.updated'): SquareEvent => ({
    merchant_id: '6SSW7HV8K2ST5',
    type,
    event_id: randomUUID(),
    created_at: new Date(Date.now() - secondsAgo * 1000).toISOString(),
    data: {
      type: 'payment',
      id: `pay_${randomUUID()}`,
      object: { payment: { id: 'pay_1', status: 'COMPLETED', amount_money: { amount: 4200, currency: 'EUR' } } },
    },
  });

  it('starts what never arrived once, through the square SDK, with the body a notification would carry; a second run starts nothing', async () => {
    const missed = Array.from({ length: 120 }, (_, index) => squareEvent(600 + index));
    const delivered = squareEvent(300);
    const body = JSON.stringify(delivered);
    expect((await post(`${stack.url}/webhooks/square`, squareHeaders(body, CATALOG_SECRETS.square, CATALOG_SECRETS.squareUrl), body)).status).toBe(202);
    square.addEvents(...missed, delivered, squareEvent(7200));

    const first = await backfill(['--since', '1h', '--types', 'payment.updated'], {}, 'square');
    expect(first.code).toBe(0);
    const outcomes = Object.fromEntries(first.lines.map((line) => [line.eventId, line.outcome]));
    expect(outcomes[delivered.event_id]).toBe('already recorded');
    expect(missed.map((event) => outcomes[event.event_id])).toEqual(Array(120).fill('started'));
    expect(first.counts).toEqual({ found: 121, alreadyRecorded: 1, started: 120, failed: 0 });
    const [request] = square.requests.slice(-2);
    expect(request!.body).toMatchObject({
      limit: 100,
      query: { filter: { event_types: ['payment.updated'], created_at: { start_at: expect.any(String) } }, sort: { field: 'DEFAULT', order: 'DESC' } },
    });

    // The stored body is Square's JSON, field for field, as the notification would have had it.
    const stored = await stack.db.query<{ body: Buffer }>('SELECT body FROM event_bodies WHERE source = $1 AND event_id = $2', ['square', missed[0]!.event_id]);
    expect(JSON.parse(stored.rows[0]!.body.toString())).toEqual(missed[0]);
    expect(await stack.client.workflow.getHandle(missed[0]!.event_id).result()).toMatchObject({ source: 'square', type: 'payment.updated' });

    const second = await backfill(['--since', '1h', '--types', 'payment.updated'], {}, 'square');
    expect(second.counts).toEqual({ found: 121, alreadyRecorded: 121, started: 0, failed: 0 });
  });

  it('retries a 503; a refused token, a missing token and a window beyond 28 days are clear errors', async () => {
    const event = squareEvent(60, 'refund.updated');
    square.addEvents(event);
    square.failNext(503);
    expect((await backfill(['--since', '1h', '--types', 'refund.updated'], {}, 'square')).counts).toMatchObject({ found: 1, started: 1 });

    const refused = await runCli(['backfill', 'square', '--since', '1h'], env({ SQUARE_ACCESS_TOKEN: 'EAAAl_revoked', SQUARE_API_URL: square.url }));
    expect(refused).toMatchObject({ code: 1, error: 'Square refused the access token (SQUARE_ACCESS_TOKEN): This request could not be authorized.' });
    const missing = await runCli(['backfill', 'square', '--since', '1h'], env({ SQUARE_ACCESS_TOKEN: '', SQUARE_API_URL: square.url }));
    expect(missing).toMatchObject({ code: 1, error: 'A Square backfill needs SQUARE_ACCESS_TOKEN (an access token that may read events).' });
    const tooFar = await runCli(['backfill', 'square', '--since', '29d'], env({ SQUARE_ACCESS_TOKEN, SQUARE_API_URL: square.url }));
    expect(tooFar).toMatchObject({ code: 1, error: '"since" reaches further back than the 28 days Square\'s Events API searches.' });
  });
});

describe('POST /admin/backfill', () => {
  const admin = (body: unknown) =>
    fetch(`${stack.url}/admin/backfill`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const status = (source: string) => fetch(`${stack.url}/admin/backfill/${source}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  it('starts the backfill as a workflow and answers 202 with its ID at once; its counts are its result', async () => {
    const event = eventOf('refund.created');
    stack.stripe.addEvents(event);
    const response = await admin({ provider: 'stripe', since: '1h', types: ['refund.created'] });
    expect(response.status).toBe(202);
    const started = (await response.json()) as { workflowId: string; runId: string; status: string };
    expect(started).toMatchObject({ workflowId: 'durable-webhooks:backfill:stripe', runId: expect.any(String), status: 'started' });
    expect(await stack.client.workflow.getHandle(started.workflowId, started.runId).result()).toEqual({ found: 1, alreadyRecorded: 0, started: 1, failed: 0 });
    expect((await stack.client.workflow.getHandle(event.id).describe()).searchAttributes).toMatchObject({ WebhookVia: ['backfill'] });
    expect(await (await status('stripe')).json()).toMatchObject({
      workflowId: started.workflowId,
      runId: started.runId,
      status: 'completed',
      counts: { started: 1 },
    });

    const guid = github.addDelivery(HOOK, { event: 'ping', payload: { zen: randomUUID(), hook_id: 42 } });
    const dryRun = (await (await admin({ provider: 'github', since: '1h', dryRun: true })).json()) as { workflowId: string; runId: string };
    const counts = (await stack.client.workflow.getHandle(dryRun.workflowId, dryRun.runId).result()) as { started: number };
    expect(counts.started).toBeGreaterThan(0);
    expect(await workflowExists(stack.client, guid)).toBe(false);
  });

  it('runs one backfill per source at a time: a second while one runs gets 409', async () => {
    // Two pages of events, and the stand-in holds the second: the first backfill is running meanwhile.
    const type = `held.${randomUUID()}`;
    stack.stripe.addEvents(...Array.from({ length: 101 }, () => eventOf(type)));
    const held = stack.stripe.holdNext('listing');
    const first = await admin({ provider: 'stripe', since: '10m', types: [type], dryRun: true });
    expect(first.status).toBe(202);
    const release = await held;
    const second = await admin({ provider: 'stripe', since: '10m' });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({
      type: 'urn:durable-webhooks:problem:backfill-running',
      detail: expect.stringContaining('durable-webhooks:backfill:stripe'),
    });
    // Another source is another backfill.
    expect((await admin({ provider: 'github', since: '10m', dryRun: true })).status).toBe(202);
    release();
    const { workflowId, runId } = (await first.json()) as { workflowId: string; runId: string };
    expect(await stack.client.workflow.getHandle(workflowId, runId).result()).toMatchObject({ found: 101 });
    expect((await status('nothing-here')).status).toBe(404);
  });

  it.each([
    [{ provider: 'shopify', since: '1h' }, 400, /"provider" must be stripe, github, paddle, square/],
    [{ provider: 'stripe' }, 400, /"since" is required/],
    [{ provider: 'stripe', since: 'yesterday' }, 400, /"since" must be a duration/],
    [{ provider: 'stripe', since: '31d' }, 400, /further back than the 30 days/],
    [{ provider: 'stripe', since: '1h', redeliver: true }, 400, /Only GitHub redelivers/],
  ])('refuses %j with %i', async (body, status, detail) => {
    const response = await admin(body);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { detail: string }).detail).toMatch(detail);
  });
});
