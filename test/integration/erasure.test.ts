import { randomBytes } from 'node:crypto';
import { ProviderKind, type WebhookEvent } from '../../contracts';
import { recordEvent } from '../../workflows';
import { eventually } from '../support/eventually';
import { eraseEvent } from '../../src/db/erasure';
import { loadBody } from '../../src/db/event-bodies';
import { storeIfNewer } from '../../src/db/subscriptions';
import { checkoutCompleted, orderCreated } from '../support/events';
import { rowsHolding, temporalText } from '../support/leaks';
import { runCli } from '../support/processes';
import { post, startStack, type WorkerStack } from '../support/stack';

const ADMIN_TOKEN = 'admin-token-for-erasure-tests-0123456789abcdef0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { ADMIN_TOKEN, REVIEW_THRESHOLD: '100000' } });
});
afterAll(() => stack.close());

const historyText = (workflowId: string) => temporalText(stack.client, workflowId);

const erase = (eventId: string, body: unknown) => post(`${stack.url}/admin/events/${encodeURIComponent(eventId)}/erase`, admin, JSON.stringify(body));

describe('erasing an event', () => {
  it('leaves no trace of its personal data in PostgreSQL, the body store or Temporal, and keeps its outcome', async () => {
    const marker = `erase${randomBytes(6).toString('hex')}`;
    const delivery = orderCreated({ email: `${marker}@example.com`, name: `Ada ${marker}` });
    expect((await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body)).status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'charged' });

    // Before: the body store and the order row hold it; Temporal never did.
    expect((await rowsHolding(stack.db, marker)).map((row) => row.split(':')[0])).toEqual(expect.arrayContaining(['event_bodies', 'orders']));
    expect(await historyText(delivery.id)).not.toContain(marker);

    const erased = await erase(delivery.id, { reason: 'GDPR request 42', by: 'dpo@example.com' });
    expect(erased.status).toBe(200);
    expect(erased.json).toMatchObject({
      eventId: delivery.id,
      erasedNow: true,
      erasedBy: 'admin token "admin"',
      requestedBy: 'dpo@example.com',
      reason: 'GDPR request 42',
      bodyStored: true,
      ordersCleared: 1,
      temporal: 'holds no personal data',
    });

    expect(await rowsHolding(stack.db, marker)).toEqual([]);
    expect(await historyText(delivery.id)).not.toContain(marker);
    expect(await loadBody(stack.db, 'standard', delivery.id)).toMatchObject({ body: null, signatureHeaders: {}, erasedAt: expect.any(Date) });

    // The outcome and status stay, with the erasure's record.
    const shown = await fetch(`${stack.url}/admin/events/${delivery.id}`, { headers: admin });
    expect(await shown.json()).toMatchObject({
      status: 'completed',
      ledger: { status: 'completed' },
      erasure: { erasedBy: 'admin token "admin"', requestedBy: 'dpo@example.com', reason: 'GDPR request 42' },
      result: { outcome: 'charged' },
    });
    const verify = await fetch(`${stack.url}/admin/events/${delivery.id}/verify`, { headers: admin });
    expect(await verify.json()).toMatchObject({ verified: false, detail: expect.stringMatching(/erased/) });

    // Erasing again, here with the CLI, changes nothing and reports the first erasure.
    const again = await runCli(['events', 'erase', delivery.id, '--reason', 'asked twice', '--json'], stack.workerEnv);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.output)).toMatchObject({ erasedNow: false, erasedAt: (erased.json as { erasedAt: string }).erasedAt, reason: 'GDPR request 42' });

    // A redelivery of the erased event stores nothing again.
    await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
    expect(await rowsHolding(stack.db, marker)).toEqual([]);
  });

  it("keeps of a PaymentIntent's metadata only what the fulfilled step wrote, and erasing leaves the marker nowhere", async () => {
    const marker = `erase${randomBytes(6).toString('hex')}`;
    const paymentIntent = `pi_${randomBytes(8).toString('hex')}`;
    // The merchant's own metadata on the checkout's PaymentIntent, as Stripe returns it on update.
    stack.stripe.paymentIntents.set(paymentIntent, {
      id: paymentIntent,
      object: 'payment_intent',
      amount: 4200,
      currency: 'eur',
      customer: null,
      payment_method: null,
      status: 'succeeded',
      metadata: { customer_email: `${marker}@example.com` },
    });
    const delivery = checkoutCompleted({ email: `${marker}@example.com`, paymentIntent });
    expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'fulfilled' });
    expect((await rowsHolding(stack.db, marker)).map((row) => row.split(':')[0]).sort()).toEqual(['event_bodies', 'orders']);

    expect((await erase(delivery.id, { reason: 'GDPR request 43' })).status).toBe(200);
    expect(await rowsHolding(stack.db, marker)).toEqual([]);
  });

  it('deletes every run of an event started before bodies were stored, whose input held its body', async () => {
    const marker = `legacy${randomBytes(6).toString('hex')}`;
    const id = `msg_legacy_${marker}`;
    const now = new Date().toISOString();
    const input: WebhookEvent = {
      source: 'standard',
      provider: ProviderKind.STANDARD_WEBHOOKS,
      id,
      type: 'note.added',
      occurredAt: now,
      receivedAt: now,
      payload: { note: marker },
    };
    const first = await stack.client.workflow.start(recordEvent, { workflowId: id, taskQueue: stack.taskQueue, args: [input] });
    await first.result();
    // A second run under the same ID (a redelivery once retention dropped the first), with the same input.
    const second = await stack.client.workflow.start(recordEvent, {
      workflowId: id,
      taskQueue: stack.taskQueue,
      args: [input],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    expect(await second.result()).toMatchObject({ outcome: 'duplicate' });
    const closed = async () => {
      let count = 0;
      for await (const _run of stack.client.workflow.list({ query: `WorkflowId = '${id}' AND ExecutionStatus = 'Completed'` })) count += 1;
      return count;
    };
    await eventually('visibility lists both runs closed', async () => (await closed()) === 2);
    expect(await historyText(id)).toContain(marker);

    const erased = await erase(id, { reason: 'legacy event' });
    expect(erased.json).toMatchObject({ bodyStored: false, temporal: 'deleted' });
    for (const runId of [first.firstExecutionRunId, second.firstExecutionRunId]) {
      // Temporal deletes in the background: here about half a minute after the request.
      await eventually(
        `run ${runId} is deleted`,
        () =>
          stack.client.workflow
            .getHandle(id, runId)
            .describe()
            .then(
              () => false,
              () => true,
            ),
        { timeoutMs: 90_000 },
      );
    }
  }, 120_000);

  it("erases every copy of the body stored under another ID (a replay that raced past the check), and no other source's", async () => {
    const marker = `erase${randomBytes(6).toString('hex')}`;
    const copy = (source: string, eventId: string) =>
      stack.db.query(
        `INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, signature_headers, body, size, sha256, received_at)
         VALUES ($1, $2, $2, 'github', 'webhook', '{}', $3, 10, $4, now())`,
        [source, eventId, Buffer.from(marker), `sha-${marker}`],
      );
    const [first, replay, elsewhere] = ['first', 'replay', 'elsewhere'].map((name) => `${name}-${marker}`);
    await copy('github', first!);
    await copy('github', replay!);
    await copy('github-enterprise', elsewhere!);

    await eraseEvent(stack.db, first!, { by: 'test', reason: 'hash' });
    const { rows } = await stack.db.query(`SELECT event_id, body IS NULL AS erased FROM event_bodies WHERE sha256 = $1 ORDER BY event_id`, [`sha-${marker}`]);
    expect(rows).toEqual([
      { event_id: elsewhere, erased: false },
      { event_id: first, erased: true },
      { event_id: replay, erased: true },
    ]);
  });

  it("clears the subscription an event wrote, and not another source's that an event of the same ID wrote", async () => {
    const eventId = `evt_shared_${randomBytes(4).toString('hex')}`;
    const subscription = (id: string) => ({ id, object: 'subscription', customer: 'cus_1', status: 'active' });
    await storeIfNewer(
      stack.db,
      { source: 'stripe', eventId, created: 1, deleted: false, subscription: subscription(`sub_a_${eventId}`) },
      subscription(`sub_a_${eventId}`),
    );
    await storeIfNewer(
      stack.db,
      { source: 'stripe-eu', eventId, created: 1, deleted: false, subscription: subscription(`sub_b_${eventId}`) },
      subscription(`sub_b_${eventId}`),
    );
    await stack.db.query(
      `INSERT INTO processed_events (source, event_id, event_type, workflow_id, first_execution_run_id) VALUES ('stripe-eu', $1, 'customer.subscription.created', $2, 'run')`,
      [eventId, `eu:${eventId}`],
    );

    expect(await eraseEvent(stack.db, `eu:${eventId}`, { by: 'test', reason: 'scope' })).toMatchObject({ subscriptionsCleared: 1 });
    const { rows } = await stack.db.query<{ id: string; cleared: boolean }>(
      `SELECT id, data = '{}' AS cleared FROM subscriptions WHERE last_event_id = $1 ORDER BY id`,
      [eventId],
    );
    expect(rows).toEqual([
      { id: `sub_a_${eventId}`, cleared: false },
      { id: `sub_b_${eventId}`, cleared: true },
    ]);
  });

  it('refuses while the event is still running (409), needs a reason (400), and knows no unknown event (404)', async () => {
    const held = orderCreated({ amount: 250_000 });
    expect((await post(`${stack.url}/webhooks/${held.path}`, held.headers, held.body)).status).toBe(202);
    const running = await erase(held.id, { reason: 'too early' });
    expect(running.status).toBe(409);
    expect(running.json).toMatchObject({ type: 'urn:durable-webhooks:problem:event-running' });
    expect((await erase(held.id, {})).status).toBe(400);
    expect((await erase('evt_nobody_knows', { reason: 'x' })).status).toBe(404);
    await stack.client.workflow.getHandle(held.id).terminate('test done');
  });
});
