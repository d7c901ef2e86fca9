import { WorkflowFailedError } from '@temporalio/client';
import { entityStateQuery, entityWorkflowId, statusQuery, type EventOutcome } from '../../contracts';
import { EntityOperations } from '../../src/temporal/entities';
import { EventOperations } from '../../src/temporal/operations';
import { eventually } from '../support/eventually';
import { shopifyOrderPaid, type SignedDelivery } from '../support/events';
import { CATALOG_SECRETS_ENV } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * Keyed flows (docs/entities.md), on the real stack: Shopify orders take turns per order, the
 * newest `updated_at` first, whatever topic each delivery claims and in whatever order they come.
 */
let stack: WorkerStack;
let entities: EntityOperations;
beforeAll(async () => {
  stack = await startStack({ env: CATALOG_SECRETS_ENV });
  entities = new EntityOperations(stack.client, new EventOperations(stack.client, { uiUrl: 'http://ui.test', db: stack.db }), stack.db);
});
afterAll(() => stack.close());

const FLOW = 'fulfilShopifyOrder';
const deliver = (delivery: SignedDelivery) => post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const resultOf = (eventId: string) => stack.client.workflow.getHandle(eventId).result() as Promise<EventOutcome>;
const at = (minute: number) => `2026-12-01T10:${String(minute).padStart(2, '0')}:00-05:00`;
const orderRows = async (orderId: number) =>
  (await stack.db.query<{ fulfilled_by: string }>('SELECT fulfilled_by FROM orders WHERE id = $1', [`shopify-${orderId}`])).rows;
const emailsOf = (orderId: number) => stack.resend.emails.filter((email) => email.subject === `Order #${orderId % 10_000} confirmed`);

it('a paid order delivered before its older unpaid state: fulfilled once, and the older state superseded, not applied after it', async () => {
  const paid = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: at(5) });
  const created = shopifyOrderPaid({ topic: 'orders/create', orderId: paid.orderId, financialStatus: 'pending', updatedAt: at(1) });
  expect((await deliver(paid)).status).toBe(202);
  expect(await resultOf(paid.id)).toMatchObject({ outcome: 'fulfilled', entity: { key: String(paid.orderId), after: null } });
  expect((await deliver(created)).status).toBe(202);
  expect(await resultOf(created.id)).toMatchObject({ outcome: 'superseded', entity: { key: String(paid.orderId), after: paid.id } });
  expect(await orderRows(paid.orderId)).toEqual([{ fulfilled_by: paid.id }]);
  expect(emailsOf(paid.orderId)).toHaveLength(1);
  const key = await entities.show(FLOW, String(paid.orderId));
  expect(key).toMatchObject({ source: 'shopify', order: 'latest', last: { eventId: paid.id, version: [at(5)] }, parked: null });
});

it("one order's topics in a burst, shuffled, a fifth of them twice, all at once: applied one at a time in version order, the rest superseded, fulfilled once", async () => {
  const first = shopifyOrderPaid({ topic: 'orders/create', financialStatus: 'pending', updatedAt: at(0) });
  const states = [
    first,
    ...Array.from({ length: 11 }, (_, index) =>
      shopifyOrderPaid({
        topic: ['orders/create', 'orders/updated', 'orders/paid'][index % 3],
        orderId: first.orderId,
        financialStatus: index < 5 ? 'pending' : 'paid',
        updatedAt: at(index + 1),
      }),
    ),
  ];
  const version = new Map(states.map((state, index) => [state.id, index]));
  const deliveries = [...states, ...states.filter((_, index) => index % 5 === 0)].sort(() => Math.random() - 0.5);
  const answers = await Promise.all(deliveries.map(deliver));
  expect(answers.every((answer) => answer.status === 202 || answer.status === 200)).toBe(true);

  const outcomes = await Promise.all(states.map((state) => resultOf(state.id)));
  const applied = outcomes.filter((outcome) => outcome.outcome !== 'superseded');
  // Each applied event names the one applied before it: one chain, every version newer than the last.
  const chain: EventOutcome[] = [];
  for (let after: string | null = null; ; ) {
    const next = applied.find((outcome) => outcome.entity!.after === after);
    if (!next) break;
    chain.push(next);
    after = next.eventId;
  }
  expect(chain.map((outcome) => outcome.eventId)).toHaveLength(applied.length);
  const versions = chain.map((outcome) => version.get(outcome.eventId)!);
  expect(versions).toEqual([...versions].sort((a, b) => a - b));
  expect(new Set(versions).size).toBe(versions.length);
  // The newest state is never superseded; the order is fulfilled once, by a paid state.
  expect(versions.at(-1)).toBe(states.length - 1);
  const [order] = await orderRows(first.orderId);
  expect(version.get(order!.fulfilled_by)).toBeGreaterThanOrEqual(6);
  expect(emailsOf(first.orderId)).toHaveLength(1);
  const state = await stack.client.workflow.getHandle(entityWorkflowId(FLOW, 'shopify', String(first.orderId))).query(entityStateQuery);
  expect(state).toMatchObject({ applied: applied.length, superseded: states.length - applied.length, pending: [], running: null });
});

/** An order whose confirmation email the provider refuses for good: its event fails, and parks its key. */
async function parkedOrder(): Promise<{ failing: SignedDelivery & { orderId: number }; next: SignedDelivery; key: string }> {
  const failing = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: at(1) });
  stack.resend.failNextWith(422, 'The to address is not valid.');
  expect((await deliver(failing)).status).toBe(202);
  await expect(resultOf(failing.id)).rejects.toThrow(WorkflowFailedError);
  const key = String(failing.orderId);
  await eventually('the key is parked on the failed event', async () => (await entities.show(FLOW, key)).parked?.eventId === failing.id);
  const next = shopifyOrderPaid({ topic: 'orders/updated', orderId: failing.orderId, updatedAt: at(2) });
  expect((await deliver(next)).status).toBe(202);
  await eventually('the next state waits for its turn', async () => (await entities.show(FLOW, key)).pending.some((request) => request.eventId === next.id));
  return { failing, next, key };
}

it('a failed event parks only its key: the next state of that order waits, another order runs, and a retry runs it in its turn before the next', async () => {
  const { failing, next, key } = await parkedOrder();
  const other = shopifyOrderPaid({ topic: 'orders/paid' });
  expect((await deliver(other)).status).toBe(202);
  expect(await resultOf(other.id)).toMatchObject({ outcome: 'fulfilled' });
  expect(await stack.client.workflow.getHandle(next.id).query(statusQuery)).toMatchObject({ waitingFor: expect.stringContaining(`its turn on ${key}`) });
  expect((await entities.list({ flow: FLOW, parked: true })).map((record) => record.key)).toContain(key);
  expect(await (await fetch(stack.metricsUrl)).text()).toContain('webhook_parked_keys{flow="fulfilShopifyOrder",source="shopify"} 1');

  await entities.retry(FLOW, key, { by: 'test', reason: 'the address is fixed' });
  expect(await resultOf(failing.id)).toMatchObject({ outcome: 'fulfilled', entity: { key, after: null } });
  expect(await resultOf(next.id)).toMatchObject({ outcome: 'already-fulfilled', entity: { key, after: failing.id } });
  expect(emailsOf(failing.orderId)).toHaveLength(1);
  expect(await entities.show(FLOW, key)).toMatchObject({ parked: null, last: { eventId: next.id } });
});

it('a skip lets a parked key go on without its failed event, which stays failed; with nothing parked, there is nothing to skip', async () => {
  const { failing, next, key } = await parkedOrder();
  await expect(entities.skip(FLOW, key, { by: 'test', reason: ' ' })).rejects.toThrow('Give a reason');
  await entities.skip(FLOW, key, { by: 'test', reason: 'the customer was told by phone' });
  expect(await resultOf(next.id)).toMatchObject({ outcome: 'already-fulfilled', entity: { key, after: null } });
  await expect(resultOf(failing.id)).rejects.toThrow(WorkflowFailedError);
  expect(await entities.show(FLOW, key)).toMatchObject({ parked: null, last: { eventId: next.id } });
  await expect(entities.skip(FLOW, key, { by: 'test', reason: 'again' })).rejects.toThrow(`${FLOW} key ${key} waits on no failed event: nothing to skip.`);
});
