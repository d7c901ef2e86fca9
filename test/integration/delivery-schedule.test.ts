import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDeliveryActivities } from '../../activities/delivery';
import { messageWorkflowId } from '../../contracts';
import { loadCommonConfig } from '../../src/config';
import { timeSkippingEnvironment } from '../support/time-skipping';
import { createEndpoint } from '../../src/db/endpoints';
import { MessageService, redeliverMessage } from '../../src/outbound/messages';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startEndpointServer } from '../support/endpoint-server';
import { workflowSinks } from '../../src/temporal/worker';
import { workflowBundle } from '../support/stack';

/**
 * The whole retry schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) running out
 * against an endpoint that always fails, on the time-skipping test server with the real delivery
 * activity, PostgreSQL and a real HTTP endpoint; then a redelivery once the endpoint is fixed.
 */
let env: TestWorkflowEnvironment;
let db: TestDatabase;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  await env?.teardown();
});

it('fails after the last scheduled attempt, days later, and a redelivery then succeeds', async () => {
  const scheduleMs = loadCommonConfig({}).deliveryScheduleMs;
  // The documented default: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (about 28 hours).
  expect(scheduleMs).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  const endpoint = await startEndpointServer(Array(scheduleMs.length).fill(503));
  const { id: endpointId } = await createEndpoint(db, 'scope', { url: endpoint.url, description: null, eventTypes: null });
  const taskQueue = 'delivery-schedule';
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    activities: createDeliveryActivities({ db, allowPrivateEndpoints: true }),
  });

  await worker.runUntil(async () => {
    const messages = new MessageService(env.client, db, { taskQueue, scheduleMs });
    const { receipt } = await messages.publish('scope', 'key-schedule', { eventType: 'order.shipped', payload: { orderId: 'ord_1' } });
    const startedAt = await env.currentTimeMs();
    expect(await env.client.workflow.getHandle(messageWorkflowId(receipt.id)).result()).toMatchObject({
      deliveries: [{ endpointId, status: 'failed', attempts: 8 }],
    });
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(scheduleMs.reduce((sum, ms) => sum + ms, 0));
    expect(endpoint.received).toHaveLength(8);

    endpoint.answer(200);
    const [redelivery] = await redeliverMessage(env.client, { taskQueue, scheduleMs }, receipt.id);
    expect(await env.client.workflow.getHandle(redelivery!).result()).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(new Set(endpoint.received.map((delivery) => delivery.headers['webhook-id']))).toEqual(new Set([receipt.id]));
  });
  await endpoint.close();
});
