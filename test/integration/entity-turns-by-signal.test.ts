import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { entityWorkflowId, type EventOutcome } from '../../contracts';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { prepareNamespace } from '../../src/temporal/namespace';
import { shopifyOrderPaid, type SignedDelivery } from '../support/events';
import { freePort } from '../support/ports';
import { CATALOG_SECRETS_ENV } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * A keyed event whose update Temporal refuses asks for its turn by signal instead, and runs in its
 * turn all the same. On a dev server of this file's own that takes one update per workflow run
 * (`history.maxTotalUpdates`, and never suggests continuing as new for it), as a hot key's eleventh
 * update in flight, or an entity's 2,001st, is refused.
 */
let server: DevServer;
let stack: WorkerStack;
const dataDir = mkdtempSync(path.join(tmpdir(), 'dw-turns-'));
beforeAll(async () => {
  server = await startDevServer({
    address: `127.0.0.1:${await freePort(1000)}`,
    dataDir,
    stdio: 'ignore',
    dynamicConfig: ['history.maxTotalUpdates=1', 'history.maxTotalUpdates.suggestContinueAsNewThreshold=2'],
  });
  const connection = await Connection.connect({ address: server.address, connectTimeout: '60s' });
  await prepareNamespace(connection, 'default');
  await connection.close();
  stack = await startStack({ address: server.address, env: CATALOG_SECRETS_ENV });
});
afterAll(async () => {
  await stack?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const deliver = (delivery: SignedDelivery) => post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const resultOf = (eventId: string) => stack.client.workflow.getHandle(eventId).result() as Promise<EventOutcome>;
const turnSignals = async (workflowId: string) =>
  ((await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'turn',
  ).length;

it("an event whose update is refused asks by signal: it has its turn after the key's last event, and the entity took one update and one request by signal", async () => {
  const paid = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: '2026-12-01T10:05:00-05:00' });
  const updated = shopifyOrderPaid({ topic: 'orders/updated', orderId: paid.orderId, updatedAt: '2026-12-01T10:07:00-05:00' });
  const key = String(paid.orderId);
  // One after the other: the key is free when the second asks, so it asks by update first.
  expect((await deliver(paid)).status).toBe(202);
  expect(await resultOf(paid.id)).toMatchObject({ outcome: 'fulfilled', entity: { key, after: null } });
  expect((await deliver(updated)).status).toBe(202);
  expect(await resultOf(updated.id)).toMatchObject({ outcome: 'already-fulfilled', entity: { key, after: paid.id } });
  expect([await turnSignals(paid.id), await turnSignals(updated.id)]).toEqual([0, 1]);
  const entity = (await stack.client.workflow.getHandle(entityWorkflowId('fulfilShopifyOrder', 'shopify', key)).fetchHistory()).events ?? [];
  expect(entity.filter((event) => event.workflowExecutionUpdateCompletedEventAttributes)).toHaveLength(1);
  expect(entity.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'requestTurn')).toHaveLength(1);
});
