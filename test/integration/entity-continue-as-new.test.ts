import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { noopMetricMeter, type MetricCounter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import {
  entityActionSignal,
  entityStateQuery,
  requestTurnSignal,
  turnDoneSignal,
  type Activities,
  type EntityInput,
  type EntityState,
  type TurnRequest,
} from '../../contracts';
import { keyEntity } from '../../workflows';
import { createEntityActivities } from '../../activities/entities';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { prepareNamespace } from '../../src/temporal/namespace';
import { workflowSinks } from '../../src/temporal/worker';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';
import { workflowBundle } from '../support/stack';

/**
 * Every event that comes while its key is busy asks the key's entity by signal, and Temporal refuses
 * a run's signals past `history.maximumSignalsPerExecution` (10,000). An entity waiting for a slow
 * event must therefore go on in a new run while it waits, or the key's later events are refused. On
 * a dev server of this file's own with both limits scaled down (100 signals, continue-as-new
 * suggested from 50 events), the entity takes 150 requests while one event runs, or while the key
 * waits on a failed one for an operator, and what it waited for reaches the run it went on in. A
 * signal the server refuses anyway is counted in the worker's metrics. The server also refuses any
 * payload past 64 KiB (Temporal's 2 MiB scaled down), a continue-as-new's input too: an entity told
 * to carry 20 requests at most carries no more across it, however many wait.
 */
const SIGNAL_LIMIT = 100;
const BLOB_LIMIT = 64 * 1024;
let server: DevServer;
let client: Client;
let connection: NativeConnection;
let db: TestDatabase;
const dataDir = mkdtempSync(path.join(tmpdir(), 'dw-entity-can-'));
beforeAll(async () => {
  server = await startDevServer({
    address: `127.0.0.1:${await freePort(1000)}`,
    dataDir,
    stdio: 'ignore',
    dynamicConfig: [
      `history.maximumSignalsPerExecution=${SIGNAL_LIMIT}`,
      'limit.historyCount.suggestContinueAsNew=50',
      `limit.blobSize.error=${BLOB_LIMIT}`,
      `limit.blobSize.warn=${BLOB_LIMIT / 2}`,
    ],
  });
  const clientConnection = await Connection.connect({ address: server.address, connectTimeout: '60s' });
  await prepareNamespace(clientConnection, 'default');
  client = new Client({ connection: clientConnection, namespace: 'default' });
  connection = await NativeConnection.connect({ address: server.address });
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  await connection?.close();
  await client?.connection.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const request = (eventId: string, version: number): TurnRequest => ({ eventId, workflowId: eventId, type: 'orders/updated', version: [version] });
const REQUESTS = SIGNAL_LIMIT * 1.5;

/**
 * An entity for key `key` whose first event, `evt_slow_<key>`, has its turn (its workflow open, with
 * nothing polling its queue), and what the entity's activities were asked.
 */
async function entityWithSlowEvent(key: string, entity: Pick<EntityInput, 'order' | 'carry'> = { order: 'latest' }) {
  const running = request(`evt_slow_${key}`, 0);
  await client.workflow.start('slowEvent', { workflowId: running.workflowId, taskQueue: 'nobody-polls' });
  const records: unknown[] = [];
  const freed: string[] = [];
  const inDatabase = createEntityActivities({ db, temporal: client, taskQueue: 'nobody-polls' });
  const putFirst: string[] = [];
  const answered: number[] = [];
  const activities: Partial<Activities> = {
    readEntity: async () => ({ last: null, parked: null }),
    takeKey: async () => ({ held: true, last: null, parked: null }),
    eventWorkflowOpen: async () => true,
    recordEntity: async ({ applied, parked }) => void records.push(applied ?? { parked: parked?.eventId ?? null }),
    // The real one too: it forgets what the entity took back from the database.
    freeKey: async (ref) => {
      freed.push(ref.key);
      await inDatabase.freeKey(ref);
    },
    putFirst: async (workflowId) => void putFirst.push(workflowId),
    storeWaiting: inDatabase.storeWaiting,
    takeWaiting: inDatabase.takeWaiting,
    // The real one too, counting the answers each call carries.
    giveTurns: async (answers) => {
      answered.push(answers.length);
      return inDatabase.giveTurns(answers);
    },
  };
  const worker = await Worker.create({
    connection,
    taskQueue: `entity-continue-as-new-${key}`,
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities,
  });
  const started = await client.workflow.signalWithStart(keyEntity, {
    workflowId: `durable-webhooks:entity:fulfilShopifyOrder:shopify:${key}`,
    taskQueue: `entity-continue-as-new-${key}`,
    args: [{ flow: 'fulfilShopifyOrder', source: 'shopify', key, ...entity }],
    signal: requestTurnSignal,
    signalArgs: [running],
  });
  return { running, worker, records, freed, putFirst, answered, firstRun: started.signaledRunId, entity: client.workflow.getHandle(started.workflowId) };
}

/** The requests of events 1 to REQUESTS of the key, one at a time, each accepted. */
async function requestMoreThanOneRunTakes(entity: ReturnType<Client['workflow']['getHandle']>) {
  for (let version = 1; version <= REQUESTS; version++) await entity.signal(requestTurnSignal, request(`evt_${version}`, version));
}

it('goes on in a new run while one event runs, so more requests than one run may take all land, and the event’s ending reaches the new run', async () => {
  const { running, worker, records, freed, putFirst, firstRun, entity } = await entityWithSlowEvent('1');
  const state = await worker.runUntil(async () => {
    await eventually('the slow event has its turn', async () => (await entity.query(entityStateQuery)).running?.eventId === running.eventId);
    await requestMoreThanOneRunTakes(entity);
    expect((await entity.describe()).runId).not.toBe(firstRun);
    const waiting = await entity.query(entityStateQuery);
    expect(waiting).toMatchObject({ running: { eventId: running.eventId }, holdsKey: true });
    expect(waiting.pending).toHaveLength(REQUESTS);
    await entity.signal(turnDoneSignal, { eventId: running.eventId, failure: null });
    return entity.result();
  });
  // The slow event applied; of those that waited, the newest went (its workflow does not exist here, so nothing ran) and the rest were superseded.
  expect(records).toEqual([{ eventId: running.eventId, version: [0] }]);
  expect(state).toMatchObject({ last: { eventId: running.eventId }, applied: 1, superseded: REQUESTS - 1, running: null, pending: [] });
  expect(freed).toEqual(['1']);
  // Each event given its turn went first: the slow one, then the newest of those that waited.
  expect(putFirst).toEqual([running.workflowId, `evt_${REQUESTS}`]);
});

it('goes on in a new run while its key waits on a failed event for an operator, and the operator’s skip reaches the new run', async () => {
  const { running, worker, records, freed, firstRun, entity } = await entityWithSlowEvent('2');
  const state = await worker.runUntil(async () => {
    await eventually('the slow event has its turn', async () => (await entity.query(entityStateQuery)).running?.eventId === running.eventId);
    await entity.signal(turnDoneSignal, { eventId: running.eventId, failure: 'the carrier refused the label' });
    await eventually('the key is parked', async () => (await entity.query(entityStateQuery)).parked !== null);
    await requestMoreThanOneRunTakes(entity);
    expect((await entity.describe()).runId).not.toBe(firstRun);
    const waiting = await entity.query(entityStateQuery);
    expect(waiting).toMatchObject({ parked: { eventId: running.eventId, failure: 'the carrier refused the label' }, running: null });
    expect(waiting.pending).toHaveLength(REQUESTS);
    await entity.signal(entityActionSignal, { action: 'skip', by: 'test', reason: 'shipped by hand' });
    return entity.result();
  });
  expect(records).toEqual([{ parked: running.eventId }, { parked: null }]);
  expect(state).toMatchObject({ last: null, applied: 0, superseded: REQUESTS - 1, parked: null, running: null, pending: [] });
  expect(freed).toEqual(['2']);
});

it("counts the entity's signals the server refuses, by flow and signal, and lets the activity retry them; an entity that is gone is no failure", async () => {
  // An entity whose run nobody works on (no worker polls its queue), so it never goes on in a new run.
  const entityId = 'durable-webhooks:entity:fulfilShopifyOrder:shopify:3';
  const entity = await client.workflow.start(keyEntity, {
    workflowId: entityId,
    taskQueue: 'nobody-polls',
    args: [{ flow: 'fulfilShopifyOrder', source: 'shopify', key: '3', order: 'latest' }],
  });
  for (let version = 1; version <= SIGNAL_LIMIT; version++) await entity.signal(requestTurnSignal, request(`evt_${version}`, version));
  const counted: Array<{ name: string; value: number; tags: MetricTags }> = [];
  const counter = (name: string, tags: MetricTags = {}): MetricCounter => ({
    name,
    kind: 'counter',
    valueType: 'int',
    add: (value, extraTags = {}) => void counted.push({ name, value, tags: { ...tags, ...extraTags } }),
    withTags: (more) => counter(name, { ...tags, ...more }),
  });
  const metricMeter: MetricMeter = {
    createCounter: (name) => counter(name),
    createHistogram: (...args) => noopMetricMeter.createHistogram(...args),
    createGauge: (...args) => noopMetricMeter.createGauge(...args),
    withTags: () => metricMeter,
  };
  const { endTurn } = createEntityActivities({ db, temporal: client, taskQueue: 'nobody-polls' });
  const activity = new MockActivityEnvironment({}, { metricMeter });

  await expect(activity.run(endTurn, { entityId, done: { eventId: 'evt_1', failure: null } })).rejects.toMatchObject({
    cause: { details: 'exceeded workflow execution limit for signal events' },
  });
  expect(counted).toEqual([
    { name: 'durable_webhooks_entity_signals_failed', value: 1, tags: expect.objectContaining({ flow: 'fulfilShopifyOrder', signal: 'turnDone' }) },
  ]);
  await activity.run(endTurn, { entityId: 'durable-webhooks:entity:fulfilShopifyOrder:shopify:gone', done: { eventId: 'evt_2', failure: null } });
  expect(counted).toHaveLength(1);
});

/** A request of 2 KB (its version carries a long second part): 50 of them pass the server's 64 KiB. */
const largeRequest = (version: number): TurnRequest => ({ ...request(`evt_${version}`, version), version: [version, 'x'.repeat(2_000)] });
const WAITING = 50;
/** Versions 1 to 50, in an order that brings older ones after newer ones have been kept in the database. */
const SHUFFLED = Array.from({ length: WAITING }, (_, index) => ((index * 37) % WAITING) + 1);
const storedRows = async (key: string) =>
  (await db.query<{ taken: string | null }>(`SELECT taken FROM entity_waiting WHERE source = 'shopify' AND key = $1`, [key])).rows;

/**
 * An entity told to carry 20 at most, whose slow event runs while the 50 large requests land: what it
 * showed (and what the database held) once its run carried 20 at most, and how it ended once the
 * slow event did.
 */
async function fiftyPastACarryOf20(key: string, order: 'serial' | 'latest') {
  const started = await entityWithSlowEvent(key, { order, carry: 20 });
  const { running, worker, entity } = started;
  let waiting: EntityState | undefined;
  let storedWhileWaiting: unknown[] = [];
  const state = await worker.runUntil(async () => {
    await eventually('the slow event has its turn', async () => (await entity.query(entityStateQuery)).running?.eventId === running.eventId);
    // A serial key's one after the other (older ones come after newer ones are kept in the database); a latest key's all at once, a burst.
    if (order === 'serial') for (const version of SHUFFLED) await entity.signal(requestTurnSignal, largeRequest(version));
    else await Promise.all(SHUFFLED.map((version) => entity.signal(requestTurnSignal, largeRequest(version))));
    // The run gives its newer requests up before the database has them: both are waited for.
    await eventually('the run carries no more than 20, and the database has the rest', async () => {
      waiting = await entity.query(entityStateQuery);
      storedWhileWaiting = await storedRows(key);
      return waiting.pending.length <= 20 && storedWhileWaiting.length === (waiting.stored?.count ?? 0);
    });
    await entity.signal(turnDoneSignal, { eventId: running.eventId, failure: null });
    return entity.result();
  });
  return { ...started, waiting: waiting!, storedWhileWaiting, state };
}

it('carries at most its 20 requests across continue-as-new while 50 larger than the server takes wait, keeps the rest of a serial key in the database, and gives all 50 their turns in version order, once each', async () => {
  const { running, freed, putFirst, waiting, storedWhileWaiting, state } = await fiftyPastACarryOf20('4', 'serial');
  expect(waiting.pending.length + waiting.stored!.count).toBe(WAITING);
  expect(storedWhileWaiting.length).toBeGreaterThanOrEqual(WAITING - 20);
  // Each went first in its turn (their workflows do not exist here, so nothing ran): the slow one, then 1 to 50 in order.
  expect(putFirst).toEqual([running.workflowId, ...Array.from({ length: WAITING }, (_, index) => `evt_${index + 1}`)]);
  expect(state).toMatchObject({ applied: 1, pending: [], stored: null, running: null });
  expect(freed).toEqual(['4']);
  expect(await storedRows('4')).toEqual([]);
});

it('supersedes all but the newest of a latest key’s requests past its 20 at once, as its next turn would, and gives the newest its turn', async () => {
  const { running, records, putFirst, answered, waiting, storedWhileWaiting, state } = await fiftyPastACarryOf20('5', 'latest');
  // Its answers, each holding a version of 2 KB, went 20 at a time at most, as many as its run carries:
  // 49 in one activity's input would pass the server's 64 KiB, and its workflow task would fail.
  expect(answered.reduce((sum, count) => sum + count, 0)).toBe(WAITING + 1);
  expect(Math.max(...answered)).toBeLessThanOrEqual(20);
  expect(waiting.pending.map((waits) => waits.eventId)).toContain(`evt_${WAITING}`);
  expect(waiting.superseded).toBe(WAITING - waiting.pending.length);
  expect(waiting.stored).toBeNull();
  expect(storedWhileWaiting).toEqual([]);
  expect(records).toEqual([{ eventId: running.eventId, version: [0] }]);
  expect(putFirst).toEqual([running.workflowId, `evt_${WAITING}`]);
  expect(state).toMatchObject({ applied: 1, superseded: WAITING - 1, pending: [], stored: null });
  expect(await storedRows('5')).toEqual([]);
});

it('hands back the same requests when a take is asked again, forgets them at the next take, and keeps one stored again as waiting', async () => {
  const ref = { flow: 'fulfilShopifyOrder', source: 'shopify', key: '6' };
  const { storeWaiting, takeWaiting } = createEntityActivities({ db, temporal: client, taskQueue: 'nobody-polls' });
  expect(await storeWaiting({ ...ref, requests: [request('evt_3', 3), request('evt_1', 1), request('evt_2', 2)] })).toBe(3);
  // Stored twice (the activity retried), it is still one request.
  expect(await storeWaiting({ ...ref, requests: [request('evt_1', 1)] })).toBe(3);

  const first = await takeWaiting({ ...ref, count: 2, take: 'run:1' });
  expect(first).toEqual({ requests: [request('evt_1', 1), request('evt_2', 2)], stored: { count: 1, oldest: request('evt_3', 3) } });
  expect(await takeWaiting({ ...ref, count: 2, take: 'run:1' })).toEqual(first);

  // Handed back to the database (the run carried too many again), evt_2 waits there again.
  expect(await storeWaiting({ ...ref, requests: [request('evt_2', 2)] })).toBe(2);
  expect(await takeWaiting({ ...ref, count: 5, take: 'run:2' })).toEqual({ requests: [request('evt_2', 2), request('evt_3', 3)], stored: null });
  // The next take forgets what the one before handed back: evt_1 is gone, and nothing is left.
  expect(await takeWaiting({ ...ref, count: 5, take: 'run:3' })).toEqual({ requests: [], stored: null });
  expect(await storedRows('6')).toEqual([]);
});
