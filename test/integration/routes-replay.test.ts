import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProviderKind, subscriberWorkflowId, type BulkItemResult } from '../../contracts';
import { Router } from '../../src/flows';
import { replayRouteBatch, type ReplayPlan } from '../../src/intake/route-replay';
import { EventIntake } from '../../src/intake/starter';
import { eventually } from '../support/eventually';
import { runCli } from '../support/processes';
import { startStack, type WorkerStack } from '../support/stack';

/**
 * `routes replay` on the dev server, PostgreSQL and a worker: a subscriber added today runs over the
 * events stored before it existed, each once; run again, it starts nothing; a batch retried after
 * its worker died goes on after the last event it settled.
 */
const config = path.join(mkdtempSync(path.join(tmpdir(), 'dw-replay-')), 'webhooks.yaml');
// Today's routes: recordEvent subscribes to paid invoices. The events were stored when the type was ignored.
const ROUTES = { 'invoice.paid': [{ flow: 'recordEvent', if: 'body.data.object.amount_paid > 0' }] };
writeFileSync(config, `sources:\n  - name: replayed\n    kind: stripe\n    secret: whsec_replayed\n    routes: ${JSON.stringify(ROUTES)}\n`);

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOKS_CONFIG: config } });
});
afterAll(() => stack?.close());

const cli = (...args: string[]) =>
  runCli([...args, '--json'], { DATABASE_URL: stack.workerEnv.DATABASE_URL, WEBHOOKS_CONFIG: config, TEMPORAL_TASK_QUEUE: stack.taskQueue });
const ledgerRows = async (source: string) =>
  Number(
    (await stack.db.query<{ count: string }>(`SELECT count(*) FROM processed_events WHERE source = $1 AND event_id LIKE '%~recordEvent'`, [source])).rows[0]!
      .count,
  );
const runsOf = async (source: string) => (await stack.client.workflow.count(`WorkflowType = 'recordEvent' AND WebhookSource = '${source}'`)).count;

/** Stores invoices as the intake does under the routes of the time, which ignored them: nothing ran. */
async function storeIgnored(source: string, invoices: ReadonlyArray<{ id: string; amountPaid: number }>) {
  const intake = new EventIntake(stack.client, stack.db, { acknowledge: 'temporal', taskQueue: stack.taskQueue });
  const target = { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE, { 'invoice.*': 'ignore' }) };
  const receivedAt = new Date().toISOString();
  for (let next = 0; next < invoices.length; next += 50) {
    await Promise.all(
      invoices.slice(next, next + 50).map(({ id, amountPaid }) => {
        const payload = { id, object: 'event', type: 'invoice.paid', data: { object: { id: `in_${id}`, amount_paid: amountPaid } } };
        const body = { raw: Buffer.from(JSON.stringify(payload)), contentType: 'application/json', signatureHeaders: {} };
        return intake.start({ source, provider: ProviderKind.STRIPE, id, type: payload.type, occurredAt: receivedAt, receivedAt, payload, body }, target);
      }),
    );
  }
}

/** One replay batch's input: recordEvent over the last hour of `source`, under today's routes. */
const batchOf = (source: string, limit: number) => ({
  flow: 'recordEvent',
  window: { since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date().toISOString(), source },
  sources: [{ name: source, kind: ProviderKind.STRIPE, routes: ROUTES }],
  after: null,
  limit,
});

it('runs a new subscriber over 1,000 stored events once each; run again, it starts nothing', async () => {
  // 1,000 paid invoices, 50 unpaid (its filter does not take them) and 20 whose bodies are purged.
  await storeIgnored(
    'replayed',
    Array.from({ length: 1_070 }, (_, index) => ({ id: `evt_replay_${index}`, amountPaid: index < 1_000 || index >= 1_050 ? 4200 : 0 })),
  );
  await stack.db.query(`UPDATE event_bodies SET body = NULL, purged_at = now() WHERE source = 'replayed' AND substring(event_id from '\\d+$')::int >= 1050`);

  const plan = JSON.parse((await cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed', '--dry-run')).output) as ReplayPlan;
  expect(plan).toMatchObject({ read: 1_070, routed: 1_000, ran: 0, purged: 20 });
  expect(plan.examples).toHaveLength(5);
  expect(await runsOf('replayed')).toBe(0);

  const first = JSON.parse((await cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed')).output);
  expect(first).toMatchObject({ state: 'completed', read: 1_070, started: 1_000, failed: 0, skipped: { 'not routed to it': 50, 'body purged': 20 } });
  expect(await runsOf('replayed')).toBe(1_000);

  const again = JSON.parse((await cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed')).output);
  expect(again).toMatchObject({ state: 'completed', read: 1_070, started: 0, skipped: { ran: 1_000, 'not routed to it': 50, 'body purged': 20 } });
  await eventually('every run recorded its event, once', async () => (await ledgerRows('replayed')) === 1_000, { timeoutMs: 90_000 });
  expect(await runsOf('replayed')).toBe(1_000);
}, 180_000);

it('a batch retried after its worker died goes on after the last event it settled, and starts none twice', async () => {
  await storeIgnored(
    'retried',
    Array.from({ length: 20 }, (_, index) => ({ id: `evt_retried_${index}`, amountPaid: 100 })),
  );
  const input = batchOf('retried', 20);
  const deps = { client: stack.client, db: stack.db, taskQueue: stack.taskQueue };
  // The first attempt dies after settling (heartbeating) five results; its other starts were on their way.
  const heartbeats: BulkItemResult[] = [];
  const died = new Error('the worker died');
  await expect(
    replayRouteBatch(deps, input, [], (result) => {
      if (heartbeats.length === 5) throw died;
      heartbeats.push(result);
    }),
  ).rejects.toBe(died);
  const retried = await replayRouteBatch(deps, input, heartbeats, () => undefined);
  expect(retried.results.slice(0, 5)).toEqual(heartbeats);
  expect(retried.results).toHaveLength(20);
  expect(retried.last).toEqual({ source: 'retried', eventId: 'evt_retried_9' });
  // What the first attempt started before it died, the retry finds started.
  expect(retried.results.map((result) => result.outcome).filter((outcome) => outcome !== 'done' && outcome !== 'skipped')).toEqual([]);
  expect(retried.results.filter((result) => result.outcome === 'skipped').map((result) => result.detail)).toEqual(
    retried.results.filter((result) => result.outcome === 'skipped').map(() => 'ran'),
  );
  const ids = retried.results.map((result) => result.eventId);
  expect(new Set(ids).size).toBe(20);
  for (const id of ids) await stack.client.workflow.getHandle(subscriberWorkflowId(id, 'recordEvent')).describe();
  expect(await runsOf('retried')).toBe(20);
});

it("draws each start from its source's standing rate, the budget its live starts share: with the budget empty, the rest wait for it", async () => {
  await storeIgnored(
    'paced',
    Array.from({ length: 5 }, (_, index) => ({ id: `evt_paced_${index}`, amountPaid: 100 })),
  );
  // The source's standing budget (`rate:` in WEBHOOKS_CONFIG) holding three tokens, refilled one in about 17 minutes.
  await stack.db.query(`INSERT INTO start_budgets (id, rate, burst, tokens) VALUES ('source:paced', 0.001, 3, 3)`);
  const input = batchOf('paced', 5);
  let waited = 0;
  const batch = replayRouteBatch({ client: stack.client, db: stack.db, taskQueue: stack.taskQueue, waiting: () => waited++ }, input, [], () => undefined);
  await eventually('three runs started, and the others wait for a token', async () => waited > 0 && (await runsOf('paced')) === 3);

  // The budget refilled (as a sweeper's release or the rate would): the others start, each on a token.
  await stack.db.query(`UPDATE start_budgets SET tokens = 2, refilled_at = clock_timestamp() WHERE id = 'source:paced'`);
  const { results } = await batch;
  expect(results.map((result) => result.outcome)).toEqual(['done', 'done', 'done', 'done', 'done']);
  for (const { eventId } of results) await stack.client.workflow.getHandle(subscriberWorkflowId(eventId, 'recordEvent')).describe();
  const { rows } = await stack.db.query<{ tokens: number }>(`SELECT tokens FROM start_budgets WHERE id = 'source:paced'`);
  expect(rows[0]!.tokens).toBeLessThan(1);
});
