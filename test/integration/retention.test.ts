import { randomUUID } from 'node:crypto';
import { ProviderKind } from '../../contracts';
import { storeBody } from '../../src/db/event-bodies';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { bodyRead, holdBodyForReader, purgeExpired } from '../../src/db/retention';
import { markStarted } from '../../src/db/inbox';
import type { Queryable } from '../../src/db/database';
import { silentLogger } from '../../src/core/logger';
import { RetentionPurger } from '../../src/intake/retention';
import { registerWaiter } from '../../src/db/waiters';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { checkoutCompleted } from '../support/events';
import { runCli } from '../support/processes';
import { SECRETS_ENV } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * BODY_RETENTION and DEDUPE_RETENTION: bodies of finished events go, the rows that find duplicates
 * stay for longer, and nothing that still needs its row (a failed event, an unstarted or
 * dead-lettered start) loses it. Real PostgreSQL; then the whole path with the receiver, a worker and the CLI.
 */
const DAY = 24 * 60 * 60 * 1000;

describe('a purge pass', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.drop());

  /** A stored body received `ageDays` ago; `status` is its ledger record's, `started` whether its workflow started. */
  const stored = async (
    id: string,
    ageDays: number,
    { status, started = true }: { status?: 'completed' | 'ignored' | 'failed' | 'processing'; started?: boolean },
  ) => {
    const receivedAt = new Date(Date.now() - ageDays * DAY).toISOString();
    const start = {
      flow: 'recordEvent',
      input: { source: 'stripe', provider: ProviderKind.STRIPE, id, type: 't', occurredAt: receivedAt, receivedAt },
      summary: id,
    };
    await storeBody(
      db,
      { source: 'stripe', eventId: id, workflowId: id, provider: ProviderKind.STRIPE, via: 'delivery', receivedAt, start, leaseMs: 0 },
      {
        raw: Buffer.from(`{"id":"${id}"}`),
        contentType: 'application/json',
        signatureHeaders: { 'stripe-signature': 't=1,v1=00' },
      },
    );
    if (started) await markStarted(db, [{ source: 'stripe', eventId: id }]);
    if (status) {
      await claimEvent(db, { source: 'stripe', eventId: id, type: 't', workflowId: id, firstExecutionRunId: `run-${id}` });
      if (status !== 'processing') await completeEvent(db, { source: 'stripe', eventId: id, status, outcome: {} });
    }
  };
  const rows = async () =>
    (
      await db.query<{ event_id: string; body: boolean; headers: boolean; purged: boolean }>(
        `SELECT event_id, body IS NOT NULL AS body, signature_headers <> '{}' AS headers, purged_at IS NOT NULL AS purged FROM event_bodies ORDER BY event_id`,
      )
    ).rows;

  it('purges the bodies of completed and ignored events past BODY_RETENTION, deletes started rows past DEDUPE_RETENTION, and keeps the rest', async () => {
    await stored('a-completed-old', 40, { status: 'completed' });
    await stored('b-ignored-old', 40, { status: 'ignored' });
    await stored('c-completed-new', 5, { status: 'completed' });
    await stored('d-failed-old', 40, { status: 'failed' });
    await stored('e-running-old', 40, { status: 'processing' });
    await stored('f-completed-ancient', 500, { status: 'completed' });
    await stored('g-unstarted-ancient', 500, { started: false });
    await stored('h-completed-old', 40, { status: 'completed' });

    // Batches of 2: the pass goes on until a batch comes back short.
    expect(await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: 400 * DAY }, { batch: 2 })).toEqual({ bodies: 4, rows: 1, waiters: 0 });
    expect(await rows()).toEqual([
      { event_id: 'a-completed-old', body: false, headers: false, purged: true },
      { event_id: 'b-ignored-old', body: false, headers: false, purged: true },
      { event_id: 'c-completed-new', body: true, headers: true, purged: false },
      { event_id: 'd-failed-old', body: true, headers: true, purged: false },
      { event_id: 'e-running-old', body: true, headers: true, purged: false },
      { event_id: 'g-unstarted-ancient', body: true, headers: true, purged: false },
      { event_id: 'h-completed-old', body: false, headers: false, purged: true },
    ]);
    expect(await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: 400 * DAY })).toEqual({ bodies: 0, rows: 0, waiters: 0 });
    expect(await purgeExpired(db, { bodyMs: null, dedupeMs: null })).toEqual({ bodies: 0, rows: 0, waiters: 0 });
  });

  it('deletes the waits whose deadline passed DEDUPE_RETENTION ago, and keeps the rest', async () => {
    const waiter = (workflowId: string, untilDaysAgo: number) =>
      registerWaiter(db, {
        workflowId,
        wait: 'refund',
        flow: 'recordCheckoutRefund',
        source: 'stripe',
        type: 'charge.refunded',
        waitKey: '/data/object/payment_intent="pi_1"',
        match: 'body.data.object.payment_intent == waiting.paymentIntent',
        fields: {},
        waiting: { paymentIntent: 'pi_1' },
        until: new Date(Date.now() - untilDaysAgo * DAY),
      });
    await waiter('w-ancient', 401);
    await waiter('w-old', 40);
    await waiter('w-waiting', -30);
    expect(await purgeExpired(db, { bodyMs: null, dedupeMs: 400 * DAY })).toMatchObject({ waiters: 1 });
    const { rows: left } = await db.query<{ workflow_id: string }>('SELECT workflow_id FROM waiters ORDER BY workflow_id');
    expect(left.map((row) => row.workflow_id)).toEqual(['w-old', 'w-waiting']);
  });

  it("ends a worker's pass after the batch under way once the worker stops, and leaves the rest to the next pass", async () => {
    let queries = 0;
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // The first batch waits until let go, as a large first purge keeps PostgreSQL busy.
    const slow: Queryable = {
      query: async (sql, params) => {
        queries++;
        if (queries === 1) await held;
        return db.query(sql, params);
      },
    };
    const purger = new RetentionPurger(slow, { bodyMs: 30 * DAY, dedupeMs: 400 * DAY }, silentLogger);
    purger.start();
    const stopped = purger.stop();
    letGo();
    await stopped;
    expect(queries).toBe(1);
  });

  it('keeps the body of an event a route took for several flows while one of its subscribers has failed, until it completes', async () => {
    const id = 'j-routed';
    const receivedAt = new Date(Date.now() - 40 * DAY).toISOString();
    const input = { source: 'stripe', provider: ProviderKind.STRIPE, id, type: 't', occurredAt: receivedAt, receivedAt };
    const routes = { flows: ['fulfilCheckout', 'recordEvent'].map((flow) => ({ flow, fields: {}, summary: id })), filtered: [], failures: [] };
    await storeBody(
      db,
      {
        source: 'stripe',
        eventId: id,
        workflowId: id,
        provider: ProviderKind.STRIPE,
        via: 'delivery',
        receivedAt,
        leaseMs: 0,
        start: { flow: 'routeEvent', input: { ...input, routes }, summary: id },
      },
      { raw: Buffer.from(`{"id":"${id}"}`), contentType: 'application/json', signatureHeaders: {} },
    );
    await markStarted(db, [{ source: 'stripe', eventId: id }]);
    const record = async (eventId: string, status: 'completed' | 'failed') => {
      await claimEvent(db, { source: 'stripe', eventId, type: 't', workflowId: eventId, firstExecutionRunId: `run-${eventId}` });
      await completeEvent(db, { source: 'stripe', eventId, status, outcome: {} });
    };
    await record(id, 'completed');
    await record(`${id}~fulfilCheckout`, 'failed');
    await record(`${id}~recordEvent`, 'completed');
    await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: null });
    expect((await rows()).find((row) => row.event_id === id)).toMatchObject({ body: true, purged: false });
    await record(`${id}~fulfilCheckout`, 'completed');
    await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: null });
    expect((await rows()).find((row) => row.event_id === id)).toMatchObject({ body: false, purged: true });
  });

  it("keeps a completed event's body that another workflow still has to read (a subscription entity's update) until it has", async () => {
    const key = { source: 'stripe', eventId: 'i-subscription-forwarded' };
    await stored(key.eventId, 40, { status: 'completed' });
    await holdBodyForReader(db, key);
    await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: null });
    expect((await rows()).find((row) => row.event_id === key.eventId)).toMatchObject({ body: true, purged: false });
    await bodyRead(db, key);
    await purgeExpired(db, { bodyMs: 30 * DAY, dedupeMs: null });
    expect((await rows()).find((row) => row.event_id === key.eventId)).toMatchObject({ body: false, purged: true });
  });
});

describe('retention end to end', () => {
  let stack: WorkerStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());
  const cli = (...args: string[]) => runCli(['events', ...args], { ...stack.workerEnv, ...SECRETS_ENV });

  it('a purged body leaves a redelivery a duplicate, and events show and verify say it was purged', async () => {
    const delivery = checkoutCompleted({ orderId: `ord_${randomUUID()}` });
    expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'fulfilled' });

    expect(await purgeExpired(stack.db, { bodyMs: 1, dedupeMs: DAY })).toMatchObject({ bodies: 1 });
    expect(await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).toMatchObject({
      status: 200,
      json: { status: 'duplicate', eventId: delivery.id },
    });
    expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(delivery.id))).toHaveLength(1);

    const shown = await cli('show', delivery.id);
    expect(shown.code).toBe(0);
    expect(shown.output).toMatch(
      new RegExp(`^Body {7}${delivery.body.length} bytes, sha256 [0-9a-f]{64}, received \\S+: purged at \\S+, past BODY_RETENTION$`, 'm'),
    );
    const verified = await cli('verify', delivery.id);
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.output).toMatch(
      new RegExp(
        `^Body purged: ${delivery.id} \\(stripe, ${delivery.body.length} bytes, .*\\): the body was purged at \\S+, past BODY_RETENTION; its size and sha256 are those received\\.$`,
        'm',
      ),
    );
  });
});
