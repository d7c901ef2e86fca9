import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type { Queryable } from '../../src/db/database';
import { claimDueStarts, startBacklog } from '../../src/db/inbox';
import { createApp } from '../../src/http/app';
import { createMetrics, serveMetrics } from '../../src/http/metrics';
import { StartSweeper } from '../../src/intake/sweeper';
import { FAST_PATH_CONCURRENCY } from '../../src/intake/fast-path';
import { EventIntake } from '../../src/intake/starter';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { startReceiver } from '../../src/receiver';
import { openDatabase } from '../../src/db/database';
import { withinTime } from '../../src/core/within-time';
import { loadReceiverConfig } from '../../src/config';
import { prepareNamespace } from '../../src/temporal/namespace';
import { eventually } from '../support/eventually';
import { sqlOf } from '../support/database';
import { runCli } from '../support/processes';
import { freePort } from '../support/ports';
import { startTcpProxy } from '../support/tcp-proxy';
import { SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';

/**
 * ACKNOWLEDGE=database on the real dev server and PostgreSQL: a delivery is answered at commit, its
 * workflow started right after or by a sweeper, and never twice, whoever starts it.
 */
let stack: WorkerStack;
beforeAll(async () => {
  // The stack's own receiver acknowledges at Temporal's confirmation, and so runs no sweeper: each test makes the ones it needs.
  stack = await startStack();
});
afterAll(() => stack?.close());

const databaseMode = () =>
  loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', TEMPORAL_TASK_QUEUE: stack.taskQueue, ACKNOWLEDGE: 'database' }, { development: true });

const signed = (type = 'checkout.session.completed') => {
  const event = stripeEvent({ type });
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, SECRETS.stripe) };
};
const started = async (eventId: string) =>
  (
    await stack.db.query<{ started: boolean }>('SELECT started_at IS NOT NULL AS started FROM event_bodies WHERE source = $1 AND event_id = $2', [
      'stripe',
      eventId,
    ])
  ).rows[0]?.started;

const resultOf = (eventId: string) => resultOnceStarted(stack.client, eventId);

/** A receiver in database mode whose Temporal never answers: it commits and answers, and starts nothing. */
async function receiverWithoutTemporal() {
  const client = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }), namespace: 'default' });
  const receiver = await databaseModeReceiver(client);
  return {
    ...receiver,
    async close() {
      await receiver.close();
      await client.connection.close();
    },
  };
}

/** A receiver in database mode starting through `client`, with its metrics served. */
async function databaseModeReceiver(client: Client) {
  const config = databaseMode();
  const starter = new EventIntake(client, stack.db, { acknowledge: 'database', taskQueue: stack.taskQueue, logger: silentLogger });
  const metrics = createMetrics({ backlog: () => startBacklog(stack.db) });
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger, metrics });
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const served = await serveMetrics(metrics, '127.0.0.1:0', silentLogger);
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    metricsUrl: `http://${served.address}/metrics`,
    async close() {
      served.server.close();
      await new Promise((resolve) => server.close(resolve));
      await starter.drain();
    },
  };
}

/** A client whose start calls are counted by workflow ID, whatever Temporal answers; `start` stands in for Temporal's where given. */
function countingClient(start: Client['workflow']['start'] = (...args) => stack.client.workflow.start(...args)) {
  const starts = new Map<string, number>();
  const client = Object.create(stack.client) as Client;
  Object.defineProperty(client, 'workflow', {
    value: Object.assign(Object.create(stack.client.workflow), {
      start: (...args: Parameters<Client['workflow']['start']>) => {
        starts.set(args[1].workflowId, (starts.get(args[1].workflowId) ?? 0) + 1);
        return start(...args);
      },
    }),
  });
  return { client, starts };
}

it('answers 202 once the body is committed, and starts its workflow right after', async () => {
  const receiver = await startReceiver(databaseMode(), stack.client, silentLogger, stack.db);
  try {
    await acceptedThenStarted(receiver.url);
  } finally {
    await receiver.close();
  }
});

async function acceptedThenStarted(url: string) {
  const delivery = signed();
  const response = await post(`${url}/webhooks/stripe`, delivery.headers, delivery.body);
  expect(response.status).toBe(202);
  expect(response.json).toEqual({ status: 'accepted', eventId: delivery.id, workflowId: delivery.id });
  expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });
  await eventually('the start is marked in the inbox', async () => (await started(delivery.id)) === true);

  const again = await post(`${url}/webhooks/stripe`, delivery.headers, delivery.body);
  expect(again.status).toBe(200);
  expect(again.json).toEqual({ status: 'duplicate', eventId: delivery.id, workflowId: delivery.id, started: true });
}

it('makes at most FAST_PATH_CONCURRENCY fast-path starts at once in a burst: every delivery is answered first, then each event starts once', async () => {
  let running = 0;
  let most = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const client = Object.create(stack.client) as Client;
  Object.defineProperty(client, 'workflow', {
    value: Object.assign(Object.create(stack.client.workflow), {
      start: async (...args: Parameters<Client['workflow']['start']>) => {
        most = Math.max(most, ++running);
        try {
          await gate;
          return await stack.client.workflow.start(...args);
        } finally {
          running--;
        }
      },
    }),
  });
  const receiver = await startReceiver(databaseMode(), client, silentLogger, stack.db);
  const deliveries = Array.from({ length: 3 * FAST_PATH_CONCURRENCY }, () => signed());
  try {
    const statuses = await Promise.all(
      deliveries.map((delivery) => post(`${receiver.url}/webhooks/stripe`, delivery.headers, delivery.body).then((response) => response.status)),
    );
    expect(statuses).toEqual(deliveries.map(() => 202));
    await eventually('the fast path holds its starts', () => running === FAST_PATH_CONCURRENCY);
    open();
    for (const delivery of deliveries) expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });
    expect(most).toBe(FAST_PATH_CONCURRENCY);
  } finally {
    open();
    await receiver.close();
  }
});

it('lets the answers go first: while more than one delivery is being stored, the fast path waits to start', async () => {
  let holding = true;
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // The body store, with the inserts made while `holding` kept until release.
  const db: Queryable = {
    async query(sql, params) {
      if (holding && sqlOf(sql).includes('INSERT INTO event_bodies')) {
        held++;
        await released;
      }
      return stack.db.query(sql, params);
    },
  };
  const { client, starts } = countingClient();
  const config = databaseMode();
  const starter = new EventIntake(client, db, { acknowledge: 'database', taskQueue: stack.taskQueue, logger: silentLogger });
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const [first, second, third] = [signed(), signed(), signed()] as const;
  try {
    const slow = [first, second].map((delivery) => post(`${url}/webhooks/stripe`, delivery.headers, delivery.body));
    await eventually('two deliveries are being stored', () => held === 2);
    holding = false;
    expect((await post(`${url}/webhooks/stripe`, third.headers, third.body)).status).toBe(202);
    const startsWhileBusy = starts.size;
    release();
    expect((await Promise.all(slow)).map((response) => response.status)).toEqual([202, 202]);
    for (const delivery of [first, second, third]) expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });
    expect({ startsWhileBusy, starts: [...starts.values()] }).toEqual({ startsWhileBusy: 0, starts: [1, 1, 1] });
  } finally {
    release();
    await new Promise((resolve) => server.close(resolve));
    await starter.drain();
  }
});

it('keeps answering 2xx while Temporal does not answer; a sweeper starts each event once when it does', async () => {
  const receiver = await receiverWithoutTemporal();
  const deliveries = Array.from({ length: 6 }, () => signed());
  try {
    for (const delivery of deliveries) {
      expect((await post(`${receiver.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
      // A provider's retry while Temporal is still down: answered from the insert, not yet started.
      const retry = await post(`${receiver.url}/webhooks/stripe`, delivery.headers, delivery.body);
      expect(retry.json).toMatchObject({ status: 'duplicate', started: false });
    }
    const metrics = await (await fetch(receiver.metricsUrl)).text();
    expect(Number(/^webhook_start_backlog (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(deliveries.length);
    expect(metrics).toMatch(/^webhook_start_backlog_oldest_seconds \d/m);
  } finally {
    await receiver.close();
  }

  // A replica that claimed two of them and was killed before starting them: their lease runs out.
  await eventually('the failed starts are due again', async () => (await claimDueStarts(stack.db, 2, 1_500)).length === 2);
  const sweepers = [countingClient(), countingClient()].map(({ client, starts }) => ({
    starts,
    sweeper: new StartSweeper(stack.db, client, { taskQueue: stack.taskQueue, logger: silentLogger, pollMs: 200 }),
  }));
  for (const { sweeper } of sweepers) await sweeper.start();
  try {
    for (const delivery of deliveries) expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });
    await eventually('every start is marked', async () => (await Promise.all(deliveries.map((delivery) => started(delivery.id)))).every(Boolean));
  } finally {
    for (const { sweeper } of sweepers) await sweeper.stop();
  }
  const starts = deliveries.map((delivery) => sweepers.reduce((sum, { starts: counted }) => sum + (counted.get(delivery.id) ?? 0), 0));
  expect(starts).toEqual(deliveries.map(() => 1));
  expect((await startBacklog(stack.db)).count).toBe(0);
});

it('takes no further row once told to stop: a sweeper whose starts hang stops after the round under way, and another starts the rest once each', async () => {
  const receiver = await receiverWithoutTemporal();
  const deliveries = Array.from({ length: 40 }, () => signed());
  try {
    for (const delivery of deliveries) expect((await post(`${receiver.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  } finally {
    await receiver.close();
  }
  const ids = deliveries.map((delivery) => delivery.id);
  await stack.db.query('UPDATE event_bodies SET start_due_at = now() WHERE event_id = ANY($1)', [ids]);

  // Starts that hang until let go, as a Temporal that does not answer holds them until their deadline.
  let letGo = () => {};
  const hanging = new Promise<void>((resolve) => (letGo = resolve));
  const { client, starts: attempted } = countingClient(async () => {
    await hanging;
    throw new Error('14 UNAVAILABLE: no connection established');
  });
  const hung = new StartSweeper(stack.db, client, {
    taskQueue: stack.taskQueue,
    logger: silentLogger,
    pollMs: 60_000,
    batch: deliveries.length,
    leaseMs: 1_000,
  });
  await hung.start();
  await eventually('its first round of starts is under way', () => attempted.size > 0);
  const stopped = hung.stop();
  letGo();
  await stopped;
  // One round of its lanes, not the batch it claimed.
  expect(attempted.size).toBeLessThan(deliveries.length);
  expect([...attempted.values()].every((count) => count === 1)).toBe(true);

  const { client: counting, starts } = countingClient();
  const survivor = new StartSweeper(stack.db, counting, { taskQueue: stack.taskQueue, logger: silentLogger, pollMs: 200, leaseMs: 1_000 });
  await survivor.start();
  try {
    await eventually('every start is made', async () => (await Promise.all(deliveries.map((delivery) => started(delivery.id)))).every(Boolean), {
      timeoutMs: 60_000,
    });
  } finally {
    await survivor.stop();
  }
  expect(ids.map((id) => starts.get(id))).toEqual(ids.map(() => 1));
});

it('answers 503 when PostgreSQL does not commit: nothing is acknowledged that is not stored', async () => {
  const unreachable: Queryable = { query: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) };
  const config = loadReceiverConfig({ ...SECRETS_ENV, ACKNOWLEDGE: 'database' }, { development: true });
  const starter = new EventIntake(stack.client, unreachable, { acknowledge: 'database', taskQueue: stack.taskQueue, logger: silentLogger });
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const delivery = signed();
    const response = await post(`${url}/webhooks/stripe`, delivery.headers, delivery.body);
    expect(response.status).toBe(503);
    expect(response.json).toMatchObject({ type: expect.stringContaining('body-store-unavailable') });
    const readiness = await fetch(`${url}/readyz`);
    expect({ status: readiness.status, problem: await readiness.json() }).toMatchObject({
      status: 503,
      problem: { type: expect.stringContaining('body-store-unavailable'), detail: expect.stringContaining('PostgreSQL cannot be reached') },
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it('answers one 202 and 200s to copies racing on two receivers', async () => {
  const [one, other] = await Promise.all([
    startReceiver(databaseMode(), stack.client, silentLogger, stack.db),
    startReceiver(databaseMode(), stack.client, silentLogger, stack.db),
  ]);
  try {
    const delivery = signed();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => post(`${(index % 2 ? other : one).url}/webhooks/stripe`, delivery.headers, delivery.body)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);
    expect(await resultOf(delivery.id)).toMatchObject({ outcome: 'fulfilled' });
  } finally {
    await Promise.all([one.close(), other.close()]);
  }
});

it('listens again after its LISTEN connection is lost, so sweepers are woken after PostgreSQL restarts', async () => {
  const channel = `inbox_test_${randomUUID().replaceAll('-', '')}`;
  const listener = async () => (await stack.db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [`LISTEN ${channel}`])).rows[0]?.pid;
  let woken = 0;
  const stop = await stack.db.listen!(channel, () => (woken += 1));
  try {
    const first = await listener();
    expect(first).toEqual(expect.any(Number));
    await stack.db.query('SELECT pg_terminate_backend($1)', [first]);
    // Listening again, it wakes the sweeper once for what was notified while nobody listened.
    await eventually('a new connection listens', async () => woken === 1 && ![undefined, first].includes(await listener()));
    woken = 0;
    await stack.db.query('SELECT pg_notify($1, $2)', [channel, '']);
    await eventually('the notification arrives on the new connection', () => woken > 0);
  } finally {
    await stop();
  }
  await eventually('stopping closes the connection', async () => (await listener()) === undefined);
});

it('stops listening while it is connecting again, and leaves no connection that would keep the pool from closing', async () => {
  const channel = `inbox_test_${randomUUID().replaceAll('-', '')}`;
  const listener = async () => (await stack.db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [`LISTEN ${channel}`])).rows[0]?.pid;
  const url = new URL(process.env.DATABASE_URL!);
  const proxy = await startTcpProxy(`${url.hostname}:${url.port || 5432}`);
  url.host = proxy.address;
  const db = await openDatabase({ url: url.toString() });
  try {
    const stop = await db.listen!(channel, () => {});
    const reconnecting = proxy.hold();
    await stack.db.query('SELECT pg_terminate_backend($1)', [await listener()]);
    // Its new connection is on its way when it is told to stop (a receiver's SIGTERM right after PostgreSQL restarted).
    await reconnecting;
    await stop();
    proxy.release();
    await expect(withinTime(db.close(), 10_000)).resolves.toBeUndefined();
    await eventually('no connection listens', async () => (await listener()) === undefined);
  } finally {
    await proxy.close();
  }
});

it('dead-letters a start Temporal keeps refusing, shows it in status (exit 1) and metrics, and starts it on inbox retry once the cause is fixed', async () => {
  // A namespace without our search attributes: Temporal refuses every start into it (INVALID_ARGUMENT).
  const namespace = `dead-letters-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const client = new Client({ connection, namespace });
  const receiver = await databaseModeReceiver(client);
  const sweeper = new StartSweeper(stack.db, client, { taskQueue: stack.taskQueue, logger: silentLogger, pollMs: 100, maxAttempts: 3 });
  const cli = (args: string[]) =>
    runCli(args, { DATABASE_URL: stack.workerEnv.DATABASE_URL, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: namespace });
  const deadLettered = async (eventId: string) =>
    (
      await stack.db.query<{ dead: boolean }>('SELECT dead_lettered_at IS NOT NULL AS dead FROM event_bodies WHERE source = $1 AND event_id = $2', [
        'stripe',
        eventId,
      ])
    ).rows[0]?.dead;
  const delivery = signed();
  try {
    expect((await post(`${receiver.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
    await sweeper.start();
    await eventually('the start is dead-lettered', async () => (await deadLettered(delivery.id)) === true, { timeoutMs: 60_000 });
    const { rows } = await stack.db.query<{ start_attempts: number; start_error: string }>(
      'SELECT start_attempts, start_error FROM event_bodies WHERE event_id = $1',
      [delivery.id],
    );
    expect(rows[0]).toMatchObject({ start_attempts: 3, start_error: expect.stringMatching(/search attribute/i) });

    const status = await cli(['status', '--json']);
    expect(status.code).toBe(1);
    expect((JSON.parse(status.output) as { backlog: { deadLettered: number } }).backlog.deadLettered).toBeGreaterThanOrEqual(1);
    const scraped = await (await fetch(receiver.metricsUrl)).text();
    expect(Number(/^webhook_start_dead_lettered (\d+)/m.exec(scraped)?.[1])).toBeGreaterThanOrEqual(1);

    await prepareNamespace(connection, namespace);
    const retry = await cli(['inbox', 'retry', delivery.id, '--json']);
    expect({ code: retry.code, answer: JSON.parse(retry.output) }).toEqual({ code: 0, answer: { retried: [{ source: 'stripe', eventId: delivery.id }] } });
    await eventually('the retried start is made', async () => (await started(delivery.id)) === true, { timeoutMs: 30_000 });
    expect((await client.workflow.getHandle(delivery.id).describe()).type).toBe('fulfilCheckout');
    expect(await cli(['inbox', 'retry', delivery.id])).toMatchObject({ code: 1, error: `No dead-lettered start for the event ${delivery.id}.` });
  } finally {
    await sweeper.stop();
    await receiver.close();
    await connection.close();
  }
});
