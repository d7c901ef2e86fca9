import type { Client } from '@temporalio/client';
import { ProviderKind } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import { burstOf, createHold, listHolds, releaseHolds, syncStandingRates } from '../../src/db/holds';
import { startBacklog } from '../../src/db/inbox';
import { StartSweeper } from '../../src/intake/sweeper';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import type { EventStarter } from '../../src/intake/port';
import { EventIntake } from '../../src/intake/starter';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { SECRETS_ENV } from '../support/signing';

/**
 * How held and paced rows drain, on PostgreSQL, with a Temporal stand-in that records each start:
 * tenants take turns, a standing rate paces every start of its source, and a release moves a row
 * that another hold still matches to that hold.
 */
let db: TestDatabase;
beforeEach(async () => {
  db = await openTestDatabase();
});
afterEach(() => db.drop());

const stripe = new SourceRegistry(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0' }, { development: true }).sources).get('stripe');

/** A Temporal client that records each start (workflow ID and when) and answers at once. */
function recordingClient() {
  const starts: Array<{ workflowId: string; at: number }> = [];
  const client = {
    connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() },
    workflow: {
      start: async (_flow: string, options: { workflowId: string }) => {
        starts.push({ workflowId: options.workflowId, at: Date.now() });
        return { firstExecutionRunId: 'run' };
      },
    },
  } as unknown as Client;
  return { client, starts };
}

let sequence = 0;
/** A verified Stripe event of `type`, for the connected account `account` when given, as the receiver hands it to a starter. */
function received(type: string, account?: string) {
  const id = `evt_drain_${++sequence}_${Math.random().toString(36).slice(2, 8)}`;
  const payload = { id, type, ...(account && { account }), data: { object: { id: `cs_${id}` } } };
  const raw = Buffer.from(JSON.stringify(payload));
  // Each a millisecond after the one before, as deliveries arrive one by one.
  const now = new Date(Date.now() + sequence).toISOString();
  return {
    source: 'stripe',
    provider: ProviderKind.STRIPE,
    id,
    type,
    occurredAt: now,
    receivedAt: now,
    payload,
    body: { raw, contentType: 'application/json', signatureHeaders: {} },
  };
}

async function store(starter: EventStarter, events: ReturnType<typeof received>[]): Promise<string[]> {
  const statuses: string[] = [];
  for (const event of events) statuses.push((await starter.start(event, stripe)).status);
  return statuses;
}

it('takes turns by tenant: with 2,000 held events of one account and 20 of another, released at 50/s, the 20 start within the first 5 seconds', async () => {
  const hold = await createHold(db, { source: 'stripe', by: 'test' });
  const { client, starts } = recordingClient();
  const starter = new EventIntake(client, db, { acknowledge: 'database', taskQueue: 'drain', logger: silentLogger });
  const big = Array.from({ length: 2000 }, () => received('checkout.session.completed', 'acct_big'));
  const small = Array.from({ length: 20 }, () => received('checkout.session.completed', 'acct_small'));
  expect(new Set(await store(starter, [...big, ...small]))).toEqual(new Set(['held']));
  expect(await releaseHolds(db, { id: hold.id }, { rate: 50, by: 'test' })).toMatchObject({ due: 2020 });

  const sweeper = new StartSweeper(db, client, { taskQueue: 'drain', logger: silentLogger });
  await sweeper.start();
  try {
    const ids = new Set(small.map((event) => event.id));
    await eventually("the small tenant's events all start", () => starts.filter((start) => ids.has(start.workflowId)).length === small.length, {
      timeoutMs: 10_000,
    });
    const drainBegan = starts[0]!.at;
    const last = Math.max(...starts.filter((start) => ids.has(start.workflowId)).map((start) => start.at));
    expect(last - drainBegan).toBeLessThan(5_000);
    // Turns: each claim takes the oldest of each tenant in turn, so the small tenant's 20 are among
    // the first 50 starts (a second at 50/s), not behind the 2,000; each tenant's own in arrival order.
    const order = starts.map((start) => start.workflowId);
    expect(Math.max(...small.map((event) => order.indexOf(event.id)))).toBeLessThan(50);
    const bigStarted = order.filter((id) => !ids.has(id));
    expect(bigStarted).toEqual(big.slice(0, bigStarted.length).map((event) => event.id));
  } finally {
    await sweeper.stop();
    await starter.drain();
  }
});

it('paces every start of a source with a standing rate (WEBHOOKS_CONFIG rate:), in both acknowledge modes, and answers 202 at once', async () => {
  await syncStandingRates(db, [{ name: 'stripe', rate: 10 }]);
  const { client, starts } = recordingClient();
  const inbox = new EventIntake(client, db, { acknowledge: 'database', taskQueue: 'drain', logger: silentLogger });
  const temporal = new EventIntake(client, db, { acknowledge: 'temporal', taskQueue: 'drain' });
  const events = Array.from({ length: 30 }, (_, index) => received('checkout.session.completed', `acct_${index % 3}`));
  expect([...(await store(inbox, events.slice(0, 15))), ...(await store(temporal, events.slice(15)))]).toEqual(events.map(() => 'accepted'));
  // A copy of a paced event not started yet is a duplicate, and starts nothing either.
  expect(await temporal.start(events[0]!, stripe)).toMatchObject({ status: 'duplicate', started: false });
  await inbox.drain();
  expect(starts).toEqual([]);

  const sweepers = [
    new StartSweeper(db, client, { taskQueue: 'drain', logger: silentLogger }),
    new StartSweeper(db, client, { taskQueue: 'drain', logger: silentLogger }),
  ];
  await Promise.all(sweepers.map((sweeper) => sweeper.start()));
  try {
    await eventually('every paced event starts', async () => (await startBacklog(db)).count === 0, { timeoutMs: 15_000 });
    expect(new Set(starts.map((start) => start.workflowId)).size).toBe(events.length);
    const times = starts.map((start) => start.at).sort((a, b) => a - b);
    const busiest = Math.max(...times.map((at) => times.filter((other) => other >= at && other - at < 1000).length));
    expect(busiest).toBeLessThanOrEqual(10 + burstOf(10));
  } finally {
    await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
  }

  // The rate removed from the configuration: the source's starts are no longer paced.
  await syncStandingRates(db, [{ name: 'stripe' }]);
  const unpaced = new EventIntake(client, db, { acknowledge: 'database', taskQueue: 'drain', logger: silentLogger });
  expect(await store(unpaced, [received('checkout.session.completed')])).toEqual(['accepted']);
  await eventually('the fast path starts it', () => starts.length === events.length + 1);
  await unpaced.drain();
});

it('holds by type pattern, holds what waits in the inbox too, and keeps a row held while another hold still matches it', async () => {
  const { client, starts } = recordingClient();
  const starter = new EventIntake(client, db, { acknowledge: 'temporal', taskQueue: 'drain' });
  const checkout = await createHold(db, { source: 'stripe', typePattern: 'checkout.*', reason: 'a bad deploy', by: 'test' });
  expect(await store(starter, [received('checkout.session.completed'), received('invoice.paid')])).toEqual(['held', 'started']);
  // An event committed and not started yet (its receiver stopped before its fast path ran) is held by a new hold too.
  const stopped = new EventIntake(client, db, { acknowledge: 'database', taskQueue: 'drain', logger: silentLogger });
  await stopped.drain();
  expect(await store(stopped, [received('invoice.created')])).toEqual(['accepted']);
  const everything = await createHold(db, { source: 'stripe', by: 'test' });
  expect(everything.held).toBe(1);
  // A new event is held by the first hold that matches it.
  expect(await store(starter, [received('checkout.session.expired'), received('invoice.paid')])).toEqual(['held', 'held']);
  expect((await listHolds(db)).map((hold) => [hold.id, hold.held])).toEqual([
    [checkout.id, 2],
    [everything.id, 2],
  ]);

  const released = await releaseHolds(db, { source: 'stripe', typePattern: 'checkout.*' }, { by: 'test' });
  expect(released).toMatchObject({ released: [{ id: checkout.id, releasedBy: 'test' }], due: 0 });
  expect((await listHolds(db)).map((hold) => [hold.id, hold.held])).toEqual([[everything.id, 4]]);
  expect(await releaseHolds(db, { source: 'stripe' }, { by: 'test' })).toMatchObject({ due: 4 });
  expect(await startBacklog(db)).toMatchObject({ count: 4, held: 0 });
  expect(starts).toHaveLength(1);
  await expect(createHold(db, { source: 'stripe', typePattern: '*.completed', by: 'test' })).rejects.toThrow('prefix ending in "*"');
});

it('loses nothing when a sweeper dies during a release: what it had claimed is started by another once its lease ends', async () => {
  const hold = await createHold(db, { source: 'stripe', by: 'test' });
  const { client, starts } = recordingClient();
  const starter = new EventIntake(client, db, { acknowledge: 'database', taskQueue: 'drain', logger: silentLogger });
  const events = Array.from({ length: 30 }, (_, index) => received('checkout.session.completed', `acct_${index % 2}`));
  await store(starter, events);
  await releaseHolds(db, { id: hold.id }, { rate: 20, by: 'test' });

  // A sweeper whose process is gone after it claimed: its starts never return, so it never marks them.
  const claimedByTheDead: string[] = [];
  const dead = {
    connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() },
    workflow: { start: (_flow: string, options: { workflowId: string }) => (claimedByTheDead.push(options.workflowId), new Promise(() => undefined)) },
  } as unknown as Client;
  const dying = new StartSweeper(db, dead, { taskQueue: 'drain', logger: silentLogger, leaseMs: 1_000 });
  // The budget full, as after an idle moment: the dying sweeper's one pass claims a burst, and hangs.
  await db.query('UPDATE start_budgets SET tokens = burst');
  void dying.sweep();
  await eventually('the dying sweeper has claimed', () => claimedByTheDead.length > 0);

  const survivor = new StartSweeper(db, client, { taskQueue: 'drain', logger: silentLogger, leaseMs: 1_000 });
  await survivor.start();
  try {
    await eventually('every released event starts', async () => (await startBacklog(db)).count === 0, { timeoutMs: 15_000 });
    expect(starts.map((start) => start.workflowId).sort()).toEqual(events.map((event) => event.id).sort());
    for (const id of claimedByTheDead) expect(starts.some((start) => start.workflowId === id)).toBe(true);
  } finally {
    await survivor.stop();
    await starter.drain();
  }
});
