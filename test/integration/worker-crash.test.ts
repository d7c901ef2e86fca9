import { retryPaymentSignal, statusQuery } from '../../contracts';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { eventually } from '../support/eventually';
import { orderCreated, shopifyOrderPaid } from '../support/events';
import { CATALOG_SECRETS_ENV } from '../support/signing';
import { spawnTs, type Spawned } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * The worker process is killed (SIGKILL) after the charge request reached Stripe and before the
 * activity completed. Temporal retries the activity on a new worker process once its 15 s
 * start-to-close timeout passes; the retry carries the same Idempotency-Key, so Stripe answers with
 * the stored PaymentIntent and the card is charged once.
 */
let stack: WorkerStack;
let worker: Spawned | undefined;

beforeAll(async () => {
  stack = await startStack({ worker: 'external', env: CATALOG_SECRETS_ENV });
});
afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await stack.close();
});

async function startWorkerProcess(): Promise<Spawned> {
  const started = spawnTs('src/worker.ts', [], stack.workerEnv);
  await started.waitFor('worker polling');
  return started;
}

it('charges exactly once when the worker dies mid-charge: the retry finds the pending charge instead of creating one', async () => {
  worker = await startWorkerProcess();
  const held = stack.stripe.holdNext('responding');
  const delivery = orderCreated();
  expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);

  const release = await held;
  expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
  release();

  worker = await startWorkerProcess();
  expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'charged' });

  // The retry saw the charge step pending, searched by the event's metadata and found the PaymentIntent.
  // (Stripe's search lags about a minute; a retry inside that repeats the create with the same key.)
  const creates = stack.stripe.requests.filter((request) => request.path === '/v1/payment_intents' && request.idempotencyKey === `${delivery.id}:charge:1`);
  expect(creates.map((request) => request.replayed)).toEqual([false]);
  const searches = stack.stripe.requests.filter((request) => request.path === '/v1/payment_intents/search');
  expect(searches.map((request) => request.params.query)).toContainEqual(`metadata['event_id']:'${delivery.id}' AND metadata['source']:'standard'`);
  expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  expect((await stack.db.query('SELECT status FROM orders WHERE id = $1', [delivery.orderId])).rows).toEqual([{ status: 'paid' }]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(delivery.id))).toHaveLength(1);

  worker.child.kill('SIGINT');
  expect(await worker.exited).toBe(0);
  worker = undefined;
}, 90_000);

it('charges exactly once when the worker dies mid-charge of a payment retry: the retried attempt finds the confirmed PaymentIntent', async () => {
  worker = await startWorkerProcess();
  const delivery = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
  expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);
  const handle = stack.client.workflow.getHandle(delivery.id);
  await eventually('the order waits for retryPayment', async () => (await handle.query(statusQuery)).awaiting?.signalFields?.attempt === 2);

  const held = stack.stripe.holdNext('responding');
  await handle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', attempt: 2 });
  const release = await held;
  expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
  release();

  worker = await startWorkerProcess();
  expect(await handle.result()).toMatchObject({ outcome: 'charged' });
  const confirms = stack.stripe.requests.filter((request) => request.path.endsWith('/confirm') && request.idempotencyKey === `${delivery.id}:charge:2`);
  expect(confirms.map((request) => request.replayed)).toEqual([false]);
  expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);
  expect((await stack.db.query('SELECT attempt, outcome FROM charge_attempts WHERE event_id = $1 ORDER BY attempt', [delivery.id])).rows).toEqual([
    { attempt: 1, outcome: 'declined' },
    { attempt: 2, outcome: 'succeeded' },
  ]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(delivery.id)).map((email) => email.idempotencyKey)).toEqual([
    `${delivery.id}:email:payment-failed:1`,
    `${delivery.id}:email:receipt`,
  ]);

  worker.child.kill('SIGINT');
  expect(await worker.exited).toBe(0);
  worker = undefined;
}, 90_000);

it('fulfils a Shopify order once when the worker dies after the confirmation email was sent: one order row, one email', async () => {
  worker = await startWorkerProcess();
  const held = stack.resend.holdNext();
  const delivery = shopifyOrderPaid();
  expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);

  const release = await held;
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
  release();

  worker = await startWorkerProcess();
  expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'fulfilled' });
  // The retried send carried the same Idempotency-Key, and Resend answered it from the first.
  expect(stack.resend.requests.filter((request) => request.idempotencyKey === delivery.id).map((request) => request.replayed)).toEqual([false, true]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey === delivery.id)).toHaveLength(1);
  expect((await stack.db.query('SELECT id, status FROM orders WHERE event_id = $1', [delivery.id])).rows).toEqual([
    { id: `shopify-${delivery.orderId}`, status: 'fulfilled' },
  ]);
  expect(stack.stripe.requests.filter((request) => request.idempotencyKey?.startsWith(delivery.id))).toEqual([]);

  worker.child.kill('SIGINT');
  expect(await worker.exited).toBe(0);
  worker = undefined;
}, 90_000);
