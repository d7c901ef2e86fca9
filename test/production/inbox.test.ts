import { setTimeout as delay } from 'node:timers/promises';
import { eventually } from '../support/eventually';
import { orderCreated, type SignedDelivery } from '../support/events';
import { runCli } from '../support/processes';
import { post, resultOnceStarted } from '../support/stack';
import { startTcpProxy } from '../support/tcp-proxy';
import { startTopology, type Topology } from '../support/topology';

/**
 * ACKNOWLEDGE=database in the production topology (the pinned Temporal server on PostgreSQL, two
 * receivers, two workers, as processes from the production build): the front door stays open while
 * Temporal is away, a receiver killed between commit and start loses nothing, and copies racing on
 * both receivers get one 202. Every order is charged once, whoever started its workflow.
 */
let topology: Topology;
beforeAll(async () => {
  topology = await startTopology({ ACKNOWLEDGE: 'database' });
}, 180_000);
afterAll(() => topology?.close(), 60_000);

type Order = SignedDelivery & { orderId: string };

const rows = async (sql: string, params: unknown[] = []) => (await topology.db.query(sql, params)).rows;
const statusOf = (delivery: SignedDelivery, url: string) =>
  post(`${url}/webhooks/${delivery.path}`, delivery.headers, delivery.body).then(
    (response) => response.status,
    () => 599,
  );

/** Each copy of an order to both receivers at once, then one more: one 202, 200s for the rest. */
async function deliverCopies(order: Order): Promise<number[]> {
  const [first, second] = topology.receivers.map((receiver) => receiver.url) as [string, string];
  const racing = await Promise.all([statusOf(order, first), statusOf(order, second)]);
  return [...racing, await statusOf(order, first)];
}

/** The inbox's backlog as a receiver's /metrics shows it. */
async function backlogOnMetrics(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(/^webhook_start_backlog (\d+)/m.exec(text)?.[1]);
}

async function statusCommand(): Promise<{ code: number | null; status: { temporal: { answering: boolean }; backlog: { count: number } } }> {
  const { code, output } = await runCli(['status', '--json'], topology.env);
  return { code, status: JSON.parse(output) };
}

/** Each order's workflow charged it once and sent one receipt; the inbox holds nothing unstarted. */
async function expectChargedOnce(orders: Order[]): Promise<void> {
  for (const order of orders) {
    expect(await resultOnceStarted(topology.client, order.id, 120_000)).toMatchObject({ outcome: 'charged' });
    const charges = topology.stripe.charges().filter((intent) => intent.metadata.event_id === order.id).length;
    const emails = topology.resend.emails.filter((email) => email.idempotencyKey?.startsWith(order.id)).length;
    expect({ id: order.id, charges, emails }).toEqual({ id: order.id, charges: 1, emails: 1 });
    expect(await rows('SELECT status FROM orders WHERE id = $1', [order.orderId])).toEqual([{ status: 'paid' }]);
  }
  await eventually('the backlog drains to zero', async () => (await backlogOnMetrics(topology.receivers[0]!.metricsUrl)) === 0);
}

it('answers every delivery 2xx while the Temporal server is stopped for 60 s during a storm, and each event completes once after', async () => {
  const before = Array.from({ length: 10 }, () => orderCreated());
  const during = Array.from({ length: 30 }, () => orderCreated());
  const after = Array.from({ length: 10 }, () => orderCreated());
  const answers: number[][] = [];
  const storm = async (orders: Order[]) => {
    for (const order of orders) answers.push(await deliverCopies(order));
  };

  await storm(before);
  await topology.stopTemporal();
  const stopped = Date.now();
  await storm(during);

  // Operators see the backlog on both receivers' /metrics and in `durable-webhooks status`.
  for (const receiver of topology.receivers) expect(await backlogOnMetrics(receiver.metricsUrl)).toBeGreaterThanOrEqual(during.length);
  const { code, status } = await statusCommand();
  expect([code, status.temporal.answering, status.backlog.count >= during.length]).toEqual([1, false, true]);

  // The outage lasts 60 s, whatever the storm took.
  await delay(Math.max(0, 60_000 - (Date.now() - stopped)));
  await topology.startTemporal();
  await storm(after);

  const orders = [...before, ...during, ...after];
  expect(answers.map((statuses) => [...statuses].sort())).toEqual(orders.map(() => [200, 200, 202]));
  await expectChargedOnce(orders);
  expect((await statusCommand()).status.backlog.count).toBe(0);
}, 300_000);

it('starts the events of a receiver SIGKILLed between commit and start, once each', async () => {
  // This receiver reaches Temporal through a proxy that then stops forwarding: it commits and
  // answers, and its starts hang until it is killed.
  const proxy = await startTcpProxy(topology.temporalAddress);
  const doomed = await topology.startReceiver({ TEMPORAL_ADDRESS: proxy.address });
  proxy.freeze();
  const orders = Array.from({ length: 10 }, () => orderCreated());
  for (const order of orders) expect(await statusOf(order, doomed.url)).toBe(202);
  doomed.process.child.kill('SIGKILL');
  await doomed.process.exited;
  await proxy.close();

  // Committed, not started: the rows are the dead receiver's until its lease ends, then a sweeper's.
  expect(
    await rows('SELECT count(*)::int AS unstarted FROM event_bodies WHERE event_id = ANY($1) AND started_at IS NULL', [orders.map((order) => order.id)]),
  ).toEqual([{ unstarted: orders.length }]);
  // A provider retrying one of them meanwhile is answered 200 from the body store: nothing doubles.
  expect(await statusOf(orders[0]!, topology.receivers[1]!.url)).toBe(200);
  await expectChargedOnce(orders);
}, 180_000);

it('answers 503 while PostgreSQL is down (nothing is acknowledged that is not committed), and starts what it committed after', async () => {
  const orders = Array.from({ length: 4 }, () => orderCreated());
  topology.postgres.stop();
  const during = await Promise.all(orders.map((order, index) => statusOf(order, topology.receivers[index % 2]!.url)));
  expect(during).toEqual(orders.map(() => 503));
  for (const receiver of topology.receivers) expect((await fetch(`${receiver.url}/readyz`)).status).toBe(503);
  topology.postgres.start();

  await eventually(
    'the receivers are ready again',
    async () =>
      (await Promise.all(topology.receivers.map((receiver) => fetch(`${receiver.url}/readyz`).then((response) => response.status)))).every(
        (status) => status === 200,
      ),
    { timeoutMs: 60_000 },
  );
  for (const order of orders) expect(await statusOf(order, topology.receivers[0]!.url)).toBe(202);
  await expectChargedOnce(orders);
}, 180_000);
