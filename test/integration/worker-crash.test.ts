import { retryPaymentSignal, statusQuery } from '../../contracts';
import { DECLINED_PAYMENT_METHOD } from '../../src/dev/stripe-objects';
import { eventually } from '../support/eventually';
import { orderCreated, shopifyOrderPaid } from '../support/events';
import { CATALOG_SECRETS_ENV } from '../support/signing';
import { spawnTs, type Spawned } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * The worker process is killed (SIGKILL) after a side effect's request reached Stripe or Resend and
 * before its activity completed. Temporal retries the activity on a new worker process once its
 * 15 s start-to-close timeout passes; the retry carries the same Idempotency-Key, so Stripe answers
 * with the stored PaymentIntent, Resend with the email it sent, and nothing happens twice.
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

/**
 * Three flows are held at the step that must not repeat, each on its own side effect: a charge's
 * create, a payment retry's confirm, a Shopify order's confirmation email. One SIGKILL of the worker
 * interrupts all three, so their activities' start-to-close timeouts run out together and the next
 * worker retries each once.
 */
it('finishes each of three flows exactly once when the worker dies in the middle of their side effects', async () => {
  worker = await startWorkerProcess();

  // A payment retry: an order declined, waiting for retryPayment, its payment-failed email sent.
  const retried = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
  expect((await post(`${stack.url}/webhooks/${retried.path}`, retried.headers, retried.body)).status).toBe(202);
  const retriedHandle = stack.client.workflow.getHandle(retried.id);
  await eventually('the order waits for retryPayment', async () => (await retriedHandle.query(statusQuery)).awaiting?.signalFields?.attempt === 2);
  await eventually('its payment-failed email is sent', async () => stack.resend.emails.some((email) => email.idempotencyKey?.startsWith(retried.id)));

  // A charge: its create reaches Stripe, which does not answer yet.
  const charged = orderCreated();
  const createHeld = stack.stripe.holdNext('responding');
  expect((await post(`${stack.url}/webhooks/${charged.path}`, charged.headers, charged.body)).status).toBe(202);
  const releaseCreate = await createHeld;
  // The payment retry's confirm reaches Stripe, held too.
  const confirmHeld = stack.stripe.holdNext('responding');
  await retriedHandle.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', attempt: 2 });
  const releaseConfirm = await confirmHeld;
  // A Shopify order: its confirmation email is sent, and Resend does not answer yet.
  const fulfilled = shopifyOrderPaid();
  const emailHeld = stack.resend.holdNext();
  expect((await post(`${stack.url}/webhooks/${fulfilled.path}`, fulfilled.headers, fulfilled.body)).status).toBe(202);
  const releaseEmail = await emailHeld;
  for (const delivery of [charged, retried]) expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);

  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
  for (const release of [releaseCreate, releaseConfirm, releaseEmail]) release();
  worker = await startWorkerProcess();

  expect(await stack.client.workflow.getHandle(charged.id).result()).toMatchObject({ outcome: 'charged' });
  expect(await retriedHandle.result()).toMatchObject({ outcome: 'charged' });
  expect(await stack.client.workflow.getHandle(fulfilled.id).result()).toMatchObject({ outcome: 'fulfilled' });

  // The charge's retry saw its step pending, searched by the event's metadata and found the PaymentIntent.
  // (Stripe's search lags about a minute; a retry inside that repeats the create with the same key.)
  const creates = stack.stripe.requests.filter((request) => request.path === '/v1/payment_intents' && request.idempotencyKey === `${charged.id}:charge:1`);
  expect(creates.map((request) => request.replayed)).toEqual([false]);
  const searches = stack.stripe.requests.filter((request) => request.path === '/v1/payment_intents/search');
  expect(searches.map((request) => request.params.query)).toContainEqual(`metadata['event_id']:'${charged.id}' AND metadata['source']:'standard'`);
  expect((await stack.db.query('SELECT status FROM orders WHERE id = $1', [charged.orderId])).rows).toEqual([{ status: 'paid' }]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(charged.id))).toHaveLength(1);

  // The payment retry's attempt found the confirmed PaymentIntent: one confirm, one receipt.
  const confirms = stack.stripe.requests.filter((request) => request.path.endsWith('/confirm') && request.idempotencyKey === `${retried.id}:charge:2`);
  expect(confirms.map((request) => request.replayed)).toEqual([false]);
  expect((await stack.db.query('SELECT attempt, outcome FROM charge_attempts WHERE event_id = $1 ORDER BY attempt', [retried.id])).rows).toEqual([
    { attempt: 1, outcome: 'declined' },
    { attempt: 2, outcome: 'succeeded' },
  ]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey?.startsWith(retried.id)).map((email) => email.idempotencyKey)).toEqual([
    `${retried.id}:email:payment-failed:1`,
    `${retried.id}:email:receipt`,
  ]);
  for (const delivery of [charged, retried]) expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === delivery.id)).toHaveLength(1);

  // The Shopify order's retried send carried the same Idempotency-Key, and Resend answered it from the first.
  expect(stack.resend.requests.filter((request) => request.idempotencyKey === fulfilled.id).map((request) => request.replayed)).toEqual([false, true]);
  expect(stack.resend.emails.filter((email) => email.idempotencyKey === fulfilled.id)).toHaveLength(1);
  expect((await stack.db.query('SELECT id, status FROM orders WHERE event_id = $1', [fulfilled.id])).rows).toEqual([
    { id: `shopify-${fulfilled.orderId}`, status: 'fulfilled' },
  ]);
  expect(stack.stripe.requests.filter((request) => request.idempotencyKey?.startsWith(fulfilled.id))).toEqual([]);

  worker.child.kill('SIGINT');
  expect(await worker.exited).toBe(0);
  worker = undefined;
}, 90_000);
