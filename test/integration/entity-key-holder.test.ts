import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { entityActionSignal, entityStateQuery, requestTurnSignal, type Activities, type TurnRequest } from '../../contracts';
import { keyEntity } from '../../workflows';
import { workflowSinks } from '../../src/temporal/worker';
import { eventually } from '../support/eventually';
import { workflowBundle } from '../support/stack';
import { timeSkippingEnvironment } from '../support/time-skipping';

/**
 * A key's entity waits for the event holding its key to hand the key over (docs/entities.md). An
 * event whose workflow was terminated while it held the key never does: after 10 minutes the entity
 * looks, takes the key from it, and parks the key on it, as on any failed event.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(() => env?.teardown());

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
