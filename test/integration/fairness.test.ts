import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ProviderKind, type EventClaim } from '../../contracts';
import { loadReceiverConfig } from '../../src/config';
import { SourceRegistry } from '../../src/providers/registry';
import { prepareNamespace } from '../../src/temporal/namespace';
import { EventIntake } from '../../src/intake/starter';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { workflowSinks } from '../../src/temporal/worker';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';
import { SECRETS_ENV } from '../support/signing';
import { workflowBundle } from '../support/stack';

/**
 * Temporal's own task-queue fairness, on a dev server of this file's own started as `npm run dev`
 * starts it (matching.enableFairness): event workflows start with their flow's tenant as fairness key, so a
 * backlog of one tenant's workflows does not hold back another's, in Temporal as in the inbox. Its
 * task queues have one partition: fairness orders each partition's backlog, and with several, one
 * the worker happens to poll less often holds back what it has by chance (a run saw 2 of 5 early).
 */
let db: TestDatabase;
let client: Client;
let server: DevServer;
const dataDir = mkdtempSync(path.join(tmpdir(), 'dw-fairness-'));
beforeAll(async () => {
  db = await openTestDatabase();
  // Started as `npm run dev` starts it, waiting up to a minute (a new machine's CI shares its cores with the Go builds).
  server = await startDevServer({
    address: `127.0.0.1:${await freePort(1000)}`,
    dataDir,
    stdio: 'ignore',
    dynamicConfig: ['matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1'],
  });
  const connection = await Connection.connect({ address: server.address, connectTimeout: '60s' });
  await prepareNamespace(connection, 'default');
  client = new Client({ connection, namespace: 'default' });
});
afterAll(async () => {
  await client?.connection.close();
  await server?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const stripe = new SourceRegistry(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0' }, { development: true }).sources).get('stripe');

/** A verified Stripe checkout of the connected account `account`, as the receiver hands it to a starter. */
function checkout(account: string) {
  const id = `evt_fair_${randomUUID()}`;
  const payload = { id, type: 'checkout.session.completed', account, data: { object: { id: `cs_${id}` } } };
  const now = new Date().toISOString();
  return {
    source: 'stripe',
    provider: ProviderKind.STRIPE,
    id,
    type: payload.type,
    occurredAt: now,
    receivedAt: now,
    payload,
    body: { raw: Buffer.from(JSON.stringify(payload)), contentType: 'application/json', signatureHeaders: {} },
  };
}

it('hands out a backlog tenant by tenant: 5 workflows started after 200 of another tenant are all among the first 50 a worker takes', async () => {
  const taskQueue = `fairness-${randomUUID()}`;
  const starter = new EventIntake(client, db, { acknowledge: 'temporal', taskQueue });
  // No worker polls yet: every first workflow task waits in the task queue's backlog, big tenant's first.
  const big = Array.from({ length: 200 }, () => checkout('acct_big'));
  const small = Array.from({ length: 5 }, () => checkout('acct_small'));
  for (const event of [...big, ...small]) expect((await starter.start(event, stripe)).status).toBe('started');

  // The worker records the order in which events claim (the first step of every event workflow) and
  // answers `duplicate`, so each workflow ends there; two workflow tasks at a time.
  const claims: string[] = [];
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    sinks: workflowSinks(),
    maxConcurrentWorkflowTaskExecutions: 2,
    activities: {
      async claimEvent({ eventId }: EventClaim) {
        claims.push(eventId);
        return 'duplicate';
      },
    },
  });
  try {
    await worker.runUntil(eventually('every event claimed', async () => claims.length === big.length + small.length, { timeoutMs: 60_000 }));
  } finally {
    await connection.close();
  }

  const smallIds = new Set(small.map((event) => event.id));
  const positions = claims.flatMap((eventId, position) => (smallIds.has(eventId) ? [position] : []));
  // First in, first out would put them behind the 200, at positions 200 and later. Taking turns, every
  // one comes within the first 50 (the worker's first polls may take a few of the big tenant's first).
  expect({ positions, early: positions.every((position) => position < 50) }).toEqual({ positions, early: true });
}, 120_000);
