import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { entityWorkflowId, statusQuery, type EventOutcome } from '../../contracts';
import { EntityOperations } from '../../src/temporal/entities';
import { EventOperations } from '../../src/temporal/operations';
import { eventually } from '../support/eventually';
import { customerThin, customerUpdated, shopifyOrderPaid, type SignedDelivery } from '../support/events';
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
/**
 * A key's applied events in the order they were applied, from their results: each names the one
 * applied before it. Fails unless they make one chain, each strictly newer than the one before.
 */
function appliedInOrder(outcomes: EventOutcome[]): EventOutcome[] {
  const applied = outcomes.filter((outcome) => outcome.outcome !== 'superseded');
  const chain: EventOutcome[] = [];
  for (let after: string | null = null; ; ) {
    const next = applied.find((outcome) => outcome.entity!.after === after);
    if (!next) break;
    chain.push(next);
    after = next.eventId;
  }
  expect(chain).toHaveLength(applied.length);
  return chain;
}

const strictlyIncreasing = (values: number[]) => [...new Set(values)].sort((a, b) => a - b);

const emailsOf = (orderId: number) => stack.resend.emails.filter((email) => email.subject === `Order #${orderId} confirmed`);

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

/** The history's events of a workflow, and the signals it took and sent. */
const historyOf = async (workflowId: string) => (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
type History = Awaited<ReturnType<typeof historyOf>>;
const signalsTaken = (history: History) => history.flatMap((event) => event.workflowExecutionSignaledEventAttributes?.signalName ?? []);
const signalsSent = (history: History) => history.filter((event) => event.signalExternalWorkflowExecutionInitiatedEventAttributes);
const keyRow = async (orderId: number) =>
  (
    await stack.db.query<{ holder: string | null; handoff: boolean }>('SELECT holder, handoff FROM entity_keys WHERE flow = $1 AND source = $2 AND key = $3', [
      FLOW,
      'shopify',
      String(orderId),
    ])
  ).rows;

it('events of a free key hold it themselves, one after the other: no entity runs, no signal passes, and the key is let go', async () => {
  const paid = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: at(5) });
  const created = shopifyOrderPaid({ topic: 'orders/create', orderId: paid.orderId, financialStatus: 'pending', updatedAt: at(1) });
  for (const delivery of [paid, created]) {
    expect((await deliver(delivery)).status).toBe(202);
    await resultOf(delivery.id);
  }
  for (const delivery of [paid, created]) {
    const history = await historyOf(delivery.id);
    expect(signalsTaken(history)).toEqual([]);
    expect(signalsSent(history)).toEqual([]);
  }
  await expect(stack.client.workflow.getHandle(entityWorkflowId(FLOW, 'shopify', String(paid.orderId))).describe()).rejects.toThrow(WorkflowNotFoundError);
  expect(await keyRow(paid.orderId)).toEqual([{ holder: null, handoff: false }]);
  expect(await entities.show(FLOW, String(paid.orderId))).toMatchObject({ open: false, holdsKey: false, running: null, last: { eventId: paid.id } });
});

it("an event that comes while another holds its key waits in the key's entity, which takes the key when the holder hands it over, and lets it go when done", async () => {
  const created = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: at(1) });
  const updated = shopifyOrderPaid({ topic: 'orders/updated', orderId: created.orderId, updatedAt: at(2) });
  const key = String(created.orderId);
  const emailHeld = stack.resend.holdNext();
  expect((await deliver(created)).status).toBe(202);
  const release = await emailHeld;
  expect(await keyRow(created.orderId)).toEqual([{ holder: created.id, handoff: false }]);
  expect(await entities.show(FLOW, key)).toMatchObject({ open: false, running: { eventId: created.id } });

  expect((await deliver(updated)).status).toBe(202);
  await eventually('the next state waits in the entity', async () =>
    (await entities.show(FLOW, key)).pending.some((request) => request.eventId === updated.id),
  );
  expect(await keyRow(created.orderId)).toEqual([{ holder: created.id, handoff: true }]);
  release();
  expect(await resultOf(created.id)).toMatchObject({ outcome: 'fulfilled', entity: { key, after: null } });
  expect(await resultOf(updated.id)).toMatchObject({ outcome: 'already-fulfilled', entity: { key, after: created.id } });

  const entityId = entityWorkflowId(FLOW, 'shopify', key);
  expect(await stack.client.workflow.getHandle(entityId).result()).toMatchObject({ applied: 1, holdsKey: false, last: { eventId: updated.id }, pending: [] });
  expect(signalsTaken(await historyOf(entityId))).toEqual(['requestTurn', 'keyGiven', 'turnDone']);
  // It answered by an activity (`giveTurns`), which signalled the event from the worker: the entity
  // signalled no workflow itself.
  expect(signalsSent(await historyOf(entityId))).toEqual([]);
  expect(signalsTaken(await historyOf(updated.id))).toEqual(['turn']);
  // Its workflow tasks go before the event workflows' (their priority unset, 3): the events wait for
  // it; and so do those of the event it gave its turn, which the key's other events wait for.
  const priorityOf = async (workflowId: string) => (await stack.client.workflow.getHandle(workflowId).describe()).priority?.priorityKey;
  expect(await priorityOf(entityId)).toBe(1);
  expect(await priorityOf(updated.id)).toBe(1);
  expect(await priorityOf(created.id)).toBeUndefined();
  expect(await keyRow(created.orderId)).toEqual([{ holder: null, handoff: false }]);
  expect(emailsOf(created.orderId)).toHaveLength(1);
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
  const versions = appliedInOrder(outcomes).map((outcome) => version.get(outcome.eventId)!);
  expect(versions).toEqual(strictlyIncreasing(versions));
  // The newest state is never superseded; the order is fulfilled once, by a paid state.
  expect(versions.at(-1)).toBe(states.length - 1);
  const [order] = await orderRows(first.orderId);
  expect(version.get(order!.fulfilled_by)).toBeGreaterThanOrEqual(6);
  expect(emailsOf(first.orderId)).toHaveLength(1);
  // Its entity, once nothing waits, lets the key go and completes.
  await eventually('the entity is done', async () => (await entities.show(FLOW, String(first.orderId))).open === false);
  expect(await keyRow(first.orderId)).toEqual([{ holder: null, handoff: false }]);
});

it('20 orders × 6 states, shuffled, a fifth twice, one in twenty held back until the rest are done: per order, none lost, none applied out of order or twice', async () => {
  const orderIds = Array.from({ length: 20 }, (_, order) => 7_000_000_000 + order * 1_000 + Math.floor(Math.random() * 1_000));
  const all = orderIds.flatMap((orderId) =>
    Array.from({ length: 6 }, (_, index) =>
      shopifyOrderPaid({
        topic: ['orders/create', 'orders/updated', 'orders/paid'][index % 3],
        orderId,
        financialStatus: index < 2 ? 'pending' : 'paid',
        updatedAt: at(index),
      }),
    ),
  );
  const version = new Map(all.map((state, index) => [state.id, index % 6]));
  const heldBack = new Set(all.filter((_, index) => index % 20 === 7));
  const first = all.filter((state) => !heldBack.has(state));
  const answers = await Promise.all([...first, ...first.filter((_, index) => index % 5 === 0)].sort(() => Math.random() - 0.5).map(deliver));
  expect(answers.every((answer) => answer.status === 202 || answer.status === 200)).toBe(true);
  await Promise.all(first.map((state) => resultOf(state.id)));
  expect((await Promise.all([...heldBack].map(deliver))).map((answer) => answer.status)).toEqual([...heldBack].map(() => 202));

  const outcomes = new Map((await Promise.all(all.map((state) => resultOf(state.id)))).map((outcome) => [outcome.eventId, outcome]));
  for (const orderId of orderIds) {
    const ofOrder = all.filter((state) => state.orderId === orderId);
    const versions = appliedInOrder(ofOrder.map((state) => outcomes.get(state.id)!)).map((outcome) => version.get(outcome.eventId)!);
    expect(versions).toEqual(strictlyIncreasing(versions));
    expect(versions.at(-1)).toBe(5);
    expect(await orderRows(orderId)).toHaveLength(1);
    expect(emailsOf(orderId)).toHaveLength(1);
    // A state held back is applied only when it is newer than every state its order had before it.
    const newestFirst = Math.max(...ofOrder.filter((state) => !heldBack.has(state)).map((state) => version.get(state.id)!));
    for (const late of ofOrder.filter((state) => heldBack.has(state)))
      expect({ late: version.get(late.id), outcome: outcomes.get(late.id)!.outcome === 'superseded' }).toEqual({
        late: version.get(late.id),
        outcome: version.get(late.id)! <= newestFirst,
      });
  }
});

/** An order whose confirmation email the provider refuses for good: its event fails, and parks its key. */
async function parkedOrder(): Promise<{ failing: SignedDelivery & { orderId: number }; next: SignedDelivery; key: string }> {
  const failing = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: at(1) });
  stack.resend.failNextWith(422, 'The to address is not valid.');
  expect((await deliver(failing)).status).toBe(202);
  await expect(resultOf(failing.id)).rejects.toThrow(WorkflowFailedError);
  const key = String(failing.orderId);
  // The event fails as it tells its entity, which records the key parked a moment later.
  await eventually('the key is parked on the failed event', async () =>
    (await entities.list({ flow: FLOW, parked: true })).some((record) => record.key === key),
  );
  expect((await entities.show(FLOW, key)).parked?.eventId).toBe(failing.id);
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

it('an event cancelled while it waits for its turn is recorded as failed, and the key goes on without it', async () => {
  const { next, key } = await parkedOrder();
  await stack.client.workflow.getHandle(next.id).cancel();
  await expect(resultOf(next.id)).rejects.toThrow(WorkflowFailedError);
  expect((await stack.db.query('SELECT status FROM processed_events WHERE event_id = $1', [next.id])).rows).toEqual([{ status: 'failed' }]);
  await entities.skip(FLOW, key, { by: 'test', reason: 'the order was cancelled' });
  await eventually('the key waits on nothing', async () => {
    const view = await entities.show(FLOW, key);
    return view.parked === null && view.running === null && view.pending.length === 0;
  });
});

// 100 a second for 3 seconds: a thousand (the 10 seconds) take one worker on the CI's two
// cores 85 s and starve the suites beside it; the burst gathers the same way.
it('a coalescing key: 100 updates a second to one customer for 3 seconds are stored in at most 3 runs, the last with the newest version', async () => {
  const customerId = `cus_${randomUUID()}`;
  const created = 1_800_000_000;
  const updates = Array.from({ length: 300 }, (_, index) => customerUpdated(customerId, created + index, index));
  const started = Date.now();
  const answers = await Promise.all(
    updates.map(async (update, index) => {
      await setTimeout(started + index * 10 - Date.now());
      return deliver(update);
    }),
  );
  expect(answers.filter((answer) => answer.status !== 202)).toEqual([]);
  // The receiver counts the key's events not done among the ten busiest keys.
  const waiting = async () => {
    const line = new RegExp(`^webhook_key_waiting_events\\{flow="syncStripeCustomer",source="stripe",key="${customerId}"\\} (\\d+)$`, 'm');
    return Number(line.exec(await (await fetch(stack.metricsUrl)).text())?.[1] ?? 0);
  };
  await eventually('the burst is counted as waiting', async () => (await waiting()) >= 50);

  const outcomes = await Promise.all(updates.map((update) => resultOf(update.id)));
  const runs = outcomes.filter((outcome) => outcome.outcome !== 'superseded');
  expect(runs.length).toBeLessThanOrEqual(3);
  expect(runs.at(-1)).toMatchObject({ eventId: updates.at(-1)!.id, outcome: 'stored' });
  const { rows } = await stack.db.query('SELECT balance, last_event_id FROM customers WHERE id = $1', [customerId]);
  expect(rows).toEqual([{ balance: '299', last_event_id: updates.at(-1)!.id }]);
  expect(await entities.show('syncStripeCustomer', customerId)).toMatchObject({
    order: 'coalesce',
    coalesce: { quiet: 5_000, ceiling: 60_000 },
    burst: null,
    last: { eventId: updates.at(-1)!.id, version: [created + 299, updates.at(-1)!.id] },
  });
  expect(await waiting()).toBe(0);
}, 120_000);

it('a thin Stripe event: verified, its customer fetched once as Stripe has it now (the request names the event) and stored; its duplicate is 200 duplicate', async () => {
  const customerId = `cus_${randomUUID()}`;
  stack.stripe.setCustomer({ id: customerId, balance: 1200, currency: 'eur', delinquent: true });
  const thin = customerThin(customerId);
  expect((await deliver(thin)).status).toBe(202);
  expect(await resultOf(thin.id)).toMatchObject({ outcome: 'stored', type: 'v1.customer.updated', entity: { key: customerId, after: null } });
  expect((await deliver(thin)).json).toMatchObject({ status: 'duplicate', eventId: thin.id, state: 'completed' });

  expect(stack.stripe.requests.filter((request) => request.path === `/v1/customers/${customerId}`)).toEqual([
    expect.objectContaining({ method: 'GET', trigger: `event=${thin.id}` }),
  ]);
  const { rows } = await stack.db.query('SELECT balance, currency, delinquent, last_event_id FROM customers WHERE id = $1', [customerId]);
  expect(rows).toEqual([{ balance: '1200', currency: 'eur', delinquent: true, last_event_id: thin.id }]);
});

it('a burst of thin events about one customer is one fetch: the newest event reads it, the others are superseded without a read', async () => {
  const customerId = `cus_${randomUUID()}`;
  const burst = Array.from({ length: 5 }, (_, index) => customerThin(customerId, 'v1.customer.updated', new Date(Date.UTC(2026, 11, 6, 10, 0, index))));
  expect((await Promise.all(burst.map(deliver))).map((answer) => answer.status)).toEqual(burst.map(() => 202));
  const outcomes = await Promise.all(burst.map((thin) => resultOf(thin.id)));
  expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['superseded', 'superseded', 'superseded', 'superseded', 'stored']);
  expect(stack.stripe.requests.filter((request) => request.path === `/v1/customers/${customerId}`).map((request) => request.trigger)).toEqual([
    `event=${burst.at(-1)!.id}`,
  ]);
});
