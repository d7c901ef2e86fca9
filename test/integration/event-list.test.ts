import { ProviderKind } from '../../contracts';
import { storeStripeEvent } from '../support/stored-events';
import { failureGroupMembers, failureGroups, listedEvent, listEvents, markRecovered, markStuck, type ListedStatus } from '../../src/db/event-list';
import { deferStart, markStarted } from '../../src/db/inbox';
import { createHold } from '../../src/db/holds';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { listRefusals, RefusalLog } from '../../src/db/refusals';
import { silentLogger } from '../../src/core/logger';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The console's lists on real PostgreSQL: every status an event can be in, inbox and ledger (the
 * ledger's copied by the trigger of migration 016), each filter, cursor pages, failure groups, and
 * the bounded table of refused deliveries.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.drop());

const MINUTE = 60_000;
let clock = Date.parse('2026-12-01T10:00:00Z');

/** Stores an event one minute after the previous one, and takes it as far as `to`. */
async function event(source: string, id: string, type: string, to: ListedStatus | 'claimed', options: { tenant?: string; errorClass?: string } = {}) {
  const receivedAt = new Date((clock += MINUTE));
  const at = receivedAt.toISOString();
  const start = {
    flow: 'recordEvent',
    input: { source, provider: ProviderKind.STRIPE, id, type, occurredAt: at, receivedAt: at },
    summary: id,
    ...(options.tenant && { tenant: options.tenant }),
  };
  await storeStripeEvent(db, {
    source,
    id,
    type,
    raw: Buffer.from(`{"id":"${id}"}`),
    receivedAt,
    start,
    ...(to === 'ignored' && { skipped: 'ignored' as const }),
  });
  if (to === 'waiting' || to === 'held' || to === 'ignored') return;
  if (to === 'dead-lettered') return deferStart(db, { source, eventId: id }, 'Temporal refused it', 0, true);
  await markStarted(db, [{ source, eventId: id }]);
  if (to === 'started') return;
  await claimEvent(db, { source, eventId: id, type, workflowId: id, firstExecutionRunId: `run-${id}` });
  if (to === 'completed') await completeEvent(db, { source, eventId: id, status: 'completed', outcome: {} });
  if (to === 'failed')
    await completeEvent(db, {
      source,
      eventId: id,
      status: 'failed',
      outcome: { failure: 'Activity task failed', type: 'ActivityFailure', errorClass: options.errorClass },
    });
}

const ids = async (filter: Parameters<typeof listEvents>[1]) => (await listEvents(db, filter, { limit: 100 })).events.map((each) => each.eventId);

describe('the event list', () => {
  beforeAll(async () => {
    await createHold(db, { source: 'shop', typePattern: 'orders/*', by: 'test' });
    await event('stripe', 'e-waiting', 'invoice.paid', 'waiting');
    await event('shop', 'e-held', 'orders/create', 'held');
    await event('stripe', 'e-dead', 'invoice.paid', 'dead-lettered');
    await event('stripe', 'e-ignored', 'customer.updated', 'ignored');
    await event('stripe', 'e-started', 'invoice.paid', 'started');
    await event('stripe', 'e-running', 'checkout.session.completed', 'claimed', { tenant: 'acct_1' });
    await event('stripe', 'e-completed', 'checkout.session.completed', 'completed', { tenant: 'acct_2' });
    await event('stripe', 'e-failed-1', 'checkout.session.completed', 'failed', { tenant: 'acct_1', errorClass: 'sendEmail › EmailRejected' });
    await event('stripe', 'e-failed-2', 'checkout.session.completed', 'failed', { errorClass: 'sendEmail › EmailRejected' });
    await event('stripe', 'e-failed-3', 'checkout.session.completed', 'failed', { errorClass: 'markPaymentIntentFulfilled › StripeInvalidRequest' });
  });

  it('tells every status apart, inbox and ledger, newest first', async () => {
    const { events } = await listEvents(db, {}, { limit: 100 });
    expect(events.map((each) => [each.eventId, each.status])).toEqual([
      ['e-failed-3', 'failed'],
      ['e-failed-2', 'failed'],
      ['e-failed-1', 'failed'],
      ['e-completed', 'completed'],
      ['e-running', 'running'],
      ['e-started', 'started'],
      ['e-ignored', 'ignored'],
      ['e-dead', 'dead-lettered'],
      ['e-held', 'held'],
      ['e-waiting', 'waiting'],
    ]);
    for (const status of ['waiting', 'held', 'dead-lettered', 'ignored', 'started', 'running', 'completed'] as const) {
      expect(await ids({ status })).toEqual(events.filter((each) => each.status === status).map((each) => each.eventId));
    }
    expect(await listedEvent(db, 'e-failed-1')).toMatchObject({ status: 'failed', tenant: 'acct_1', errorClass: 'sendEmail › EmailRejected' });
  });

  it('filters by source, type or prefix, tenant, failure class and time, as the CLI writes them', async () => {
    expect(await ids({ source: 'shop' })).toEqual(['e-held']);
    expect(await ids({ type: 'invoice.paid' })).toEqual(['e-started', 'e-dead', 'e-waiting']);
    expect(await ids({ type: 'checkout.*', status: 'failed' })).toEqual(['e-failed-3', 'e-failed-2', 'e-failed-1']);
    expect(await ids({ tenant: 'acct_1' })).toEqual(['e-failed-1', 'e-running']);
    expect(await ids({ errorClass: 'sendEmail › EmailRejected' })).toEqual(['e-failed-2', 'e-failed-1']);
    const completed = await listedEvent(db, 'e-completed');
    expect(await ids({ since: completed!.receivedAt, until: new Date(completed!.receivedAt.getTime() + 2 * MINUTE) })).toEqual(['e-failed-1', 'e-completed']);
  });

  it('pages by cursor: every event once, in order, however the page is cut', async () => {
    const all = await ids({});
    const paged: string[] = [];
    let after: string | undefined;
    do {
      const page = await listEvents(db, {}, { after, limit: 3 });
      paged.push(...page.events.map((each) => each.eventId));
      after = page.next ?? undefined;
    } while (after);
    expect(paged).toEqual(all);
    await expect(listEvents(db, {}, { after: 'not-a-cursor', limit: 3 })).rejects.toThrow('"after" is not a cursor this list gave');
  });

  it('groups failed events by source, type and failure class, with a stable fingerprint', async () => {
    const groups = await failureGroups(db, { limit: 10 });
    expect(groups.map(({ state, errorClass, count, examples }) => ({ state, errorClass, count, examples }))).toEqual([
      { state: 'failed', errorClass: 'sendEmail › EmailRejected', count: 2, examples: ['e-failed-2', 'e-failed-1'] },
      { state: 'failed', errorClass: 'markPaymentIntentFulfilled › StripeInvalidRequest', count: 1, examples: ['e-failed-3'] },
    ]);
    const [emails] = groups;
    expect(emails!.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(await failureGroups(db, { limit: 1, fingerprint: emails!.fingerprint })).toEqual([emails]);
    expect(await failureGroupMembers(db, emails!.fingerprint, 10)).toEqual(['e-failed-1', 'e-failed-2']);
    expect(await ids({ group: emails!.fingerprint })).toEqual(['e-failed-2', 'e-failed-1']);
  });

  it('marks a running event stuck while an activity keeps failing, groups it apart from failures, and running again once it goes through', async () => {
    await markStuck(db, 'e-running', 'sendEmail › Error');
    expect(await listedEvent(db, 'e-running')).toMatchObject({ status: 'stuck', errorClass: 'sendEmail › Error' });
    expect(await ids({ status: 'stuck' })).toEqual(['e-running']);
    expect(await ids({ status: 'running' })).toEqual([]);
    const stuck = (await failureGroups(db, { limit: 10 })).find((group) => group.state === 'stuck');
    expect(stuck).toMatchObject({ source: 'stripe', errorClass: 'sendEmail › Error', count: 1, examples: ['e-running'] });
    // The same class failed and stuck are two groups.
    await markStuck(db, 'e-running', 'sendEmail › EmailRejected');
    const fingerprints = (await failureGroups(db, { limit: 10 }))
      .filter((group) => group.errorClass === 'sendEmail › EmailRejected')
      .map((group) => group.state);
    expect(fingerprints.sort()).toEqual(['failed', 'stuck']);
    await markRecovered(db, 'e-running');
    expect(await listedEvent(db, 'e-running')).toMatchObject({ status: 'running', errorClass: null });
    // A finished event is never marked stuck.
    await markStuck(db, 'e-completed', 'sendEmail › Error');
    expect(await listedEvent(db, 'e-completed')).toMatchObject({ status: 'completed', errorClass: null });
  });
});

describe('refused deliveries', () => {
  const refusal = (index: number) => ({
    refusedAt: new Date(),
    source: 'stripe',
    path: '/webhooks/stripe',
    status: 400,
    reason: 'invalid-signature',
    detail: `refusal ${index}`,
    client: '127.0.0.1',
    headerNames: ['content-type', 'stripe-signature'],
  });

  it('keeps at most the row cap, newest first, and drops what does not fit in the buffer, counted', async () => {
    const warnings: unknown[] = [];
    const logger = { ...silentLogger, warn: (...args: unknown[]) => warnings.push(args) } as typeof silentLogger;
    const log = new RefusalLog(db, logger, { maxRows: 5, maxRowsPerAddress: 5, retentionMs: 3600_000, maxBuffered: 8, flushMs: 60_000 });
    for (let index = 0; index < 10; index++) log.record(refusal(index));
    await log.stop();
    const kept = await listRefusals(db, { limit: 100 });
    expect(kept.map((each) => each.detail)).toEqual(['refusal 7', 'refusal 6', 'refusal 5', 'refusal 4', 'refusal 3']);
    expect(kept[0]).toMatchObject({ source: 'stripe', reason: 'invalid-signature', client: '127.0.0.1', headerNames: ['content-type', 'stripe-signature'] });
    expect(JSON.stringify(warnings)).toContain('"dropped":2');
  });

  it("keeps each address to its share: a flood from one address pushes out its own refusals, not another's", async () => {
    const limits = { maxRows: 20, maxRowsPerAddress: 5, retentionMs: 3600_000, maxBuffered: 100, flushMs: 60_000 };
    const earlier = new RefusalLog(db, silentLogger, limits);
    for (let index = 0; index < 3; index++) earlier.record({ ...refusal(200 + index), client: '192.0.2.1' });
    await earlier.stop();
    const flood = new RefusalLog(db, silentLogger, limits);
    // One buffer takes 25 of an address (its share of 100, as 5 of 20): the rest are dropped, counted.
    for (let index = 0; index < 60; index++) flood.record({ ...refusal(300 + index), client: '198.51.100.66' });
    await flood.stop();
    const kept = await listRefusals(db, { limit: 100 });
    const of = (client: string) =>
      kept
        .filter((each) => each.client === client)
        .map((each) => each.detail)
        .sort();
    expect(of('192.0.2.1')).toEqual(['refusal 200', 'refusal 201', 'refusal 202']);
    expect(of('198.51.100.66')).toEqual(['refusal 320', 'refusal 321', 'refusal 322', 'refusal 323', 'refusal 324']);
  });

  it('deletes refusals past the retention', async () => {
    const log = new RefusalLog(db, silentLogger, { maxRows: 1000, maxRowsPerAddress: 1000, retentionMs: 60_000, maxBuffered: 10, flushMs: 60_000 });
    log.record({ ...refusal(100), refusedAt: new Date(Date.now() - 120_000) });
    log.record(refusal(101));
    await log.stop();
    expect((await listRefusals(db, { limit: 100 })).map((each) => each.detail)).not.toContain('refusal 100');
    expect((await listRefusals(db, { limit: 100 })).map((each) => each.detail)).toContain('refusal 101');
  });
});
