import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment, TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { entityActionSignal, entityStateQuery, entityWorkflowId, requestTurnSignal, type Activities, type TurnAsk, type TurnRequest } from '../../contracts';
import { createEntityActivities } from '../../activities/entities';
import { keyEntity } from '../../workflows';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { keyHolder } from '../../src/db/entities';
import { workflowSinks } from '../../src/temporal/worker';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { workflowBundle } from '../support/stack';
import { timeSkippingEnvironment } from '../support/time-skipping';

/**
 * Who holds a key (docs/entities.md): an event of a free key itself, else the key's entity, never
 * two at once. An event whose workflow was terminated while it held the key never hands it over:
 * after 10 minutes the entity looks, takes the key from it, and parks the key on it, as on any
 * failed event. And a step whose answer Temporal loses with a workflow task the server refuses (a
 * signal came in while it completed) must not leave the entity, or an event, believing what the
 * database no longer says.
 */
let env: TestWorkflowEnvironment;
let server: TestWorkflowEnvironment;
let db: TestDatabase;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
  server = await TestWorkflowEnvironment.createFromExistingServer({ address: process.env.TEMPORAL_ADDRESS! });
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  await server?.teardown();
  await env?.teardown();
});

const request = (eventId: string): TurnRequest => ({ eventId, workflowId: eventId, type: 'orders/updated', version: ['2026-12-01T10:00:00Z'] });

it('takes its key from a holder whose workflow ended without letting it go, parks the key on that event, and lets the key go once skipped', async () => {
  const holder = request('evt_terminated');
  const waiting = request('evt_waiting');
  const takes: Array<string | undefined> = [];
  const parkedRecords: unknown[] = [];
  let freed = 0;
  const activities: Partial<Activities> = {
    readEntity: async () => ({ last: null, parked: null }),
    takeKey: async ({ from }) => {
      takes.push(from);
      return from === holder.workflowId ? { held: true, last: null, parked: null } : { held: false, holder };
    },
    eventWorkflowOpen: async (workflowId) => workflowId !== holder.workflowId,
    recordEntity: async ({ parked }) => void parkedRecords.push(parked),
    freeKey: async () => void freed++,
    putFirst: async () => {},
    giveTurns: createEntityActivities({ db, temporal: env.client, taskQueue: 'entity-key-holder' }).giveTurns,
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'entity-key-holder',
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
  });
  const handle = await env.client.workflow.signalWithStart(keyEntity, {
    workflowId: 'durable-webhooks:entity:fulfilShopifyOrder:shopify:1',
    taskQueue: 'entity-key-holder',
    args: [{ flow: 'fulfilShopifyOrder', source: 'shopify', key: '1', order: 'latest' }],
    signal: requestTurnSignal,
    signalArgs: [waiting],
  });
  const state = await worker.runUntil(async () => {
    await eventually('the entity waits for the holder', async () => takes.length === 1);
    // The 10 minutes the entity waits for its holder to hand the key over.
    await env.sleep('11 minutes');
    await eventually('the key is parked on the terminated holder', async () => (await handle.query(entityStateQuery)).parked !== null);
    expect(await handle.query(entityStateQuery)).toMatchObject({
      holdsKey: true,
      running: null,
      pending: [waiting],
      parked: { eventId: holder.eventId, failure: 'its workflow ended without letting its key go (terminated?)' },
    });
    await handle.signal(entityActionSignal, { action: 'skip', by: 'test', reason: 'it was terminated on purpose' });
    return handle.result();
  });
  expect(takes).toEqual([undefined, holder.workflowId]);
  expect(parkedRecords).toEqual([expect.objectContaining({ eventId: holder.eventId }), null]);
  // The waiting event's workflow does not exist here, so its turn reaches nobody; the entity lets the key go and completes.
  expect(state).toMatchObject({ holdsKey: false, parked: null, pending: [], running: null });
  expect(freed).toBe(1);
});

it('lets its key go by an activity recorded in its history: an event that asks as the entity completes has its turn only once the entity holds the key again', async () => {
  const key = randomUUID();
  const entityId = entityWorkflowId('fulfilShopifyOrder', 'shopify', key);
  const taskQueue = `entity-free-key-${key}`;
  // The database's holder of the key, as the activities below keep it.
  let holder: string | null = null;
  const holderAtTurns: Array<string | null> = [];
  let askAsItCompletes: (() => Promise<void>) | undefined = () =>
    server.client.workflow.getHandle(entityId).signal(requestTurnSignal, request('evt_asks_as_it_completes'));
  const activities: Partial<Activities> = {
    readEntity: async () => ({ last: null, parked: null }),
    takeKey: async () => {
      holder = entityId;
      return { held: true, last: null, parked: null };
    },
    // The entity has nothing left and lets its key go; an event asks before the entity has completed.
    freeKey: async () => {
      holder = null;
      const ask = askAsItCompletes;
      askAsItCompletes = undefined;
      await ask?.();
    },
    // Called as each turn is given.
    putFirst: async () => void holderAtTurns.push(holder),
    recordEntity: async () => {},
    eventWorkflowOpen: async () => false,
    giveTurns: createEntityActivities({ db, temporal: server.client, taskQueue }).giveTurns,
  };
  const worker = await Worker.create({
    connection: server.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
  });
  const state = await worker.runUntil(async () => {
    const handle = await server.client.workflow.signalWithStart(keyEntity, {
      workflowId: entityId,
      taskQueue,
      args: [{ flow: 'fulfilShopifyOrder', source: 'shopify', key, order: 'latest' }],
      signal: requestTurnSignal,
      signalArgs: [request('evt_first')],
    });
    return handle.result();
  });
  // Neither event's workflow exists here, so neither turn reaches anybody: the entity lets the key go each time and completes.
  expect(holderAtTurns).toEqual([entityId, entityId]);
  expect(state).toMatchObject({ holdsKey: false, pending: [], running: null });
  expect(holder).toBeNull();
});

it("an event asked again (its first answer lost with a refused workflow task) once its key is free does not hold it: it waits in the key's entity already", async () => {
  const key = randomUUID();
  const { askTurn, endTurn } = createEntityActivities({ db, temporal: server.client, taskQueue: `nobody-polls-${key}` });
  const activity = new MockActivityEnvironment();
  const ask = (eventId: string): TurnAsk => ({ flow: 'fulfilShopifyOrder', source: 'shopify', key, order: 'latest', request: request(eventId) });
  const claimed = (eventId: string) =>
    claimEvent(db, { source: 'shopify', eventId, type: 'orders/updated', workflowId: eventId, firstExecutionRunId: randomUUID() });
  const first = ask(`evt_first_${key}`);
  const waiting = ask(`evt_waiting_${key}`);
  await claimed(first.request.eventId);
  await claimed(waiting.request.eventId);

  expect(await activity.run(askTurn, first)).toMatchObject({ held: true, turn: { go: true } });
  await activity.run(endTurn, {
    entityId: entityWorkflowId(first.flow, first.source, key),
    done: { eventId: first.request.eventId, failure: null },
    held: first,
  });
  // The first event let the key go, but is not completed yet: the next one waits in the entity.
  expect(await activity.run(askTurn, waiting)).toMatchObject({ turn: null });
  await completeEvent(db, { source: 'shopify', eventId: first.request.eventId, status: 'completed', outcome: {} });

  expect(await activity.run(askTurn, waiting)).toMatchObject({ turn: null });
  expect(await keyHolder(db, first)).toBeNull();
  await server.client.workflow.getHandle(entityWorkflowId(first.flow, first.source, key)).terminate('the test is over');
});
