import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProviderKind } from '../../contracts';
import { Router } from '../../src/flows';
import { EventIntake } from '../../src/intake/starter';
import type { ReplayPlan } from '../../src/intake/route-replay';
import { eventually } from '../support/eventually';
import { runCli, spawnTs, type Spawned } from '../support/processes';
import { startStack, type WorkerStack } from '../support/stack';

/**
 * `routes replay` on the dev server, PostgreSQL and a worker process: a subscriber added today runs
 * over the events stored before it existed, each once, through a worker killed halfway; run again,
 * it starts nothing.
 */
const config = path.join(mkdtempSync(path.join(tmpdir(), 'dw-replay-')), 'webhooks.yaml');
// Today's routes: recordEvent subscribes to paid invoices. The events were stored when the type was ignored.
writeFileSync(
  config,
  `sources:
  - name: replayed
    kind: stripe
    secret: whsec_replayed
    routes:
      invoice.paid:
        - flow: recordEvent
          if: body.data.object.amount_paid > 0
`,
);

let stack: WorkerStack;
let worker: Spawned | undefined;
beforeAll(async () => {
  stack = await startStack({ worker: 'external', env: { WEBHOOKS_CONFIG: config } });
});
afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await stack?.close();
});

async function startWorkerProcess(): Promise<Spawned> {
  const started = spawnTs('src/worker.ts', [], stack.workerEnv);
  await started.waitFor('worker polling');
  return started;
}

const cli = (...args: string[]) =>
  runCli([...args, '--json'], { DATABASE_URL: stack.workerEnv.DATABASE_URL, WEBHOOKS_CONFIG: config, TEMPORAL_TASK_QUEUE: stack.taskQueue });
const replays = async () =>
  Number(
    (await stack.db.query<{ count: string }>(`SELECT count(*) FROM processed_events WHERE source = 'replayed' AND event_id LIKE '%~recordEvent'`)).rows[0]!
      .count,
  );

it('runs a new subscriber over 1,000 stored events once each, through a worker killed halfway; run again, it starts nothing', async () => {
  // 1,000 paid invoices, 50 unpaid (its filter does not take them) and 20 whose bodies are purged, stored under the old routes.
  const intake = new EventIntake(stack.client, stack.db, { acknowledge: 'temporal', taskQueue: stack.taskQueue });
  const target = { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE, { 'invoice.*': 'ignore' }) };
  const receivedAt = new Date().toISOString();
  const invoices = Array.from({ length: 1_070 }, (_, index) => ({
    id: `evt_replay_${index}`,
    object: 'event',
    type: 'invoice.paid',
    data: { object: { id: `in_${index}`, amount_paid: index < 1_000 || index >= 1_050 ? 4200 : 0 } },
  }));
  for (let next = 0; next < invoices.length; next += 50) {
    await Promise.all(
      invoices.slice(next, next + 50).map((payload) =>
        intake.start(
          {
            source: 'replayed',
            provider: ProviderKind.STRIPE,
            id: payload.id,
            type: payload.type,
            occurredAt: receivedAt,
            receivedAt,
            payload,
            body: { raw: Buffer.from(JSON.stringify(payload)), contentType: 'application/json', signatureHeaders: {} },
          },
          target,
        ),
      ),
    );
  }
  await stack.db.query(`UPDATE event_bodies SET body = NULL, purged_at = now() WHERE source = 'replayed' AND substring(event_id from '\\d+$')::int >= 1050`);

  const plan = JSON.parse((await cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed', '--dry-run')).output) as ReplayPlan;
  expect(plan).toMatchObject({ read: 1_070, routed: 1_000, ran: 0, purged: 20 });
  expect(plan.examples).toHaveLength(5);
  expect(await replays()).toBe(0);

  worker = await startWorkerProcess();
  const first = cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed', '--rate', '100/s');
  await eventually('a third of the runs started', async () => (await replays()) >= 300, { timeoutMs: 60_000 });
  worker.child.kill('SIGKILL');
  await worker.exited;
  worker = await startWorkerProcess();

  const result = JSON.parse((await first).output) as { state: string; read: number; started: number; skipped: Record<string, number>; failed: number };
  expect(result).toMatchObject({ state: 'completed', read: 1_070, failed: 0 });
  // A run started just before the kill, whose heartbeat was lost, is found started on the retry.
  expect(result.started + (result.skipped.ran ?? 0)).toBe(1_000);
  expect(result.skipped).toMatchObject({ 'not routed to it': 50, 'body purged': 20 });
  expect((await stack.client.workflow.count(`WorkflowType = 'recordEvent' AND WebhookSource = 'replayed'`)).count).toBe(1_000);
  await eventually('every run recorded its event', async () => (await replays()) === 1_000, { timeoutMs: 60_000 });

  const again = JSON.parse((await cli('routes', 'replay', '--flow', 'recordEvent', '--since', '1h', '--source', 'replayed')).output);
  expect(again).toMatchObject({ state: 'completed', read: 1_070, started: 0, skipped: { ran: 1_000, 'not routed to it': 50, 'body purged': 20 } });
  expect(await replays()).toBe(1_000);
}, 180_000);
