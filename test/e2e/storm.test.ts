import { Client, Connection } from '@temporalio/client';
import { startStripeStandIn, type StripeStandIn } from '../../src/dev/stripe-stand-in';
import { createTestDatabase } from '../support/database';
import { passableTempDir } from '../support/dirs';
import { orderCreated, type SignedDelivery } from '../support/events';
import { freePort } from '../support/ports';
import { spawnTs, type Spawned } from '../support/processes';
import { startResendStandIn, type ResendStandIn } from '../support/resend-stand-in';
import { SECRETS } from '../support/signing';

/**
 * A laptop that kills `npm run dev` mid-storm: orders arrive with duplicates, the whole process
 * group (receiver, worker, Temporal dev server, embedded PostgreSQL) is SIGKILLed, `npm run dev`
 * starts again, and the provider redelivers. Every order acknowledged before the kill completes,
 * charged once and emailed once. Stripe and Resend are stand-ins in this process, so they outlive
 * the kill and count every call; on the embedded database, then on PostgreSQL.
 */
const ORDERS = 60;
const COPIES = 2;
const KILL_AFTER_ACKNOWLEDGED = 30;

describe.each([
  ['the embedded database', false],
  ['PostgreSQL', true],
])('npm run dev on %s, SIGKILLed mid-storm', (_database, postgres) => {
  let stripe: StripeStandIn;
  let resend: ResendStandIn;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let env: NodeJS.ProcessEnv;
  let dev: Spawned | undefined;
  beforeAll(async () => {
    stripe = await startStripeStandIn();
    resend = await startResendStandIn();
    database = postgres ? await createTestDatabase() : undefined;
    env = {
      PORT: String(await freePort()),
      TEMPORAL_ADDRESS: `127.0.0.1:${await freePort(1000)}`,
      DATA_DIR: passableTempDir('dw-storm-'),
      DATABASE_URL: database?.url ?? '',
      STANDARD_WEBHOOK_SECRET: SECRETS.standard,
      STRIPE_SECRET_KEY: 'sk_test_storm',
      STRIPE_API_URL: stripe.url,
      EMAIL_PROVIDER: 'resend',
      RESEND_API_KEY: 're_test_storm',
      RESEND_BASE_URL: resend.url,
      WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    };
  });
  afterAll(async () => {
    if (dev) {
      dev.child.kill('SIGINT');
      await dev.exited;
    }
    await stripe?.close();
    await resend?.close();
    await database?.drop();
  });

  const startDev = async () => {
    const started = spawnTs('src/dev.ts', [], env, { detached: true });
    await started.waitFor('Press Ctrl-C to stop.');
    return started;
  };
  const deliver = async (delivery: SignedDelivery): Promise<number> => {
    try {
      const response = await fetch(`http://127.0.0.1:${env.PORT}/webhooks/${delivery.path}`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      return response.status;
    } catch {
      return 0;
    }
  };

  it('completes every order acknowledged before the kill, charged once and emailed once, once the redeliveries arrive', async () => {
    dev = await startDev();
    const orders = Array.from({ length: ORDERS }, () => orderCreated());
    const acknowledged = new Set<string>();
    let killed: Promise<unknown> | undefined;
    const killNow = () => {
      process.kill(-dev!.child.pid!, 'SIGKILL');
      return dev!.exited;
    };
    // Every copy of every order, 8 at a time; the group is killed once enough were acknowledged.
    const copies = orders.flatMap((order) => Array.from({ length: COPIES }, () => order));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < copies.length) {
          const order = copies[next++]!;
          const status = await deliver(order);
          if (status >= 200 && status < 300) acknowledged.add(order.id);
          if (acknowledged.size >= KILL_AFTER_ACKNOWLEDGED) killed ??= killNow();
        }
      }),
    );
    await (killed ?? killNow());
    console.log(`storm (${_database}): ${acknowledged.size} of ${ORDERS} orders acknowledged before the SIGKILL`);
    expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER_ACKNOWLEDGED);

    dev = await startDev();
    // The provider redelivers what it saw no 2xx for, and sends some acknowledged ones again.
    for (const order of orders) {
      const status = await deliver(order);
      expect({ id: order.id, status, answered: status === 200 || status === 202 }).toMatchObject({ id: order.id, answered: true });
    }

    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    try {
      const client = new Client({ connection });
      for (const order of orders) expect(await client.workflow.getHandle(order.id).result()).toMatchObject({ outcome: 'charged' });
    } finally {
      await connection.close();
    }
    for (const order of orders) {
      expect({ id: order.id, charges: stripe.charges().filter((intent) => intent.metadata.event_id === order.id).length }).toEqual({
        id: order.id,
        charges: 1,
      });
      expect({ id: order.id, receipts: resend.emails.filter((email) => email.idempotencyKey === `${order.id}:email:receipt`).length }).toEqual({
        id: order.id,
        receipts: 1,
      });
    }
  }, 240_000);
});
