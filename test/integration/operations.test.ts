import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually';
import { applySignal, statusQuery, subscriptionStateQuery, subscriptionWorkflowId } from '../../contracts';
import { chargeOrderFlow, subscriptionEntity } from '../../workflows';
import { EventOperations } from '../../src/temporal/operations';
import { orderCreated, subscriptionEvent, type SignedDelivery } from '../support/events';
import { runCli } from '../support/processes';
import { githubHeaders, SECRETS } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * `durable-webhooks events …` and `/admin`, against the real dev server, a real worker, PostgreSQL
 * and the stand-ins. Every operation is addressed by event ID; resets repeat no side effect.
 */
const ADMIN_TOKEN = 'admin-test-token-0123456789abcdef0123456789';
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { REVIEW_THRESHOLD: '100000', ADMIN_TOKEN } });
});
afterAll(() => stack.close());
// A test that makes Resend refuse a key never leaves it refusing for the next one.
afterEach(() => stack.resend.acceptApiKey(undefined));

const cli = (...args: string[]) =>
  runCli(['events', ...args], {
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    TEMPORAL_UI_URL: 'http://ui.test',
    DATABASE_URL: stack.workerEnv.DATABASE_URL,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  });
const cliJson = async (...args: string[]) => {
  const { code, output } = await cli(...args, '--json');
  expect({ code, output }).toMatchObject({ code: 0 });
  return JSON.parse(output) as Record<string, unknown>;
};
const deliver = (delivery: SignedDelivery) => post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
const admin = (path: string, init: RequestInit = {}, token = ADMIN_TOKEN) =>
  fetch(`${stack.url}/admin${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

async function heldOrder(): Promise<string> {
  const delivery = orderCreated({ amount: 250000 });
  await deliver(delivery);
  const handle = stack.client.workflow.getHandle(delivery.id);
  await eventually('the order is held for review', async () => (await handle.query(statusQuery)).waitingFor !== null);
  return delivery.id;
}

/** A GitHub ping whose notification email fails for good (Resend refuses the API key): a failed event. */
async function failedPing(): Promise<string> {
  const delivery = randomUUID();
  // Each ping its own body: the same signed body under a second delivery ID is a replay, which does nothing.
  const body = JSON.stringify({ zen: 'Practicality beats purity.', hook_id: 9, hook: { id: delivery }, repository: { full_name: 'o/r' } });
  await post(`${stack.url}/webhooks/github`, await githubHeaders(body, SECRETS.github, { delivery, event: 'ping' }), body);
  await expect(stack.client.workflow.getHandle(delivery).result()).rejects.toThrow();
  return delivery;
}

describe('durable-webhooks events', () => {
  it('show: source, type, status, steps, result and the UI link; exit 1 for an unknown event', async () => {
    const delivery = orderCreated();
    await deliver(delivery);
    await stack.client.workflow.getHandle(delivery.id).result();

    const view = await cliJson('show', delivery.id);
    expect(view).toMatchObject({
      eventId: delivery.id,
      source: 'standard',
      eventType: 'order.created',
      workflowType: chargeOrderFlow.name,
      status: 'completed',
      summary: `standard · order.created · ${delivery.orderId} · 42.00 EUR`,
      progress: { stepsDone: ['claim', 'charge', 'email:receipt'] },
      ledger: {
        status: 'completed',
        steps: expect.arrayContaining([
          expect.objectContaining({ step: 'order:paid', externalId: delivery.orderId }),
          expect.objectContaining({ step: 'email:receipt' }),
        ]),
        charges: [
          expect.objectContaining({
            attempt: 1,
            idempotencyKey: `${delivery.id}:charge:1`,
            outcome: 'succeeded',
            paymentIntentId: expect.stringMatching(/^pi_/),
          }),
        ],
      },
      result: { outcome: 'charged' },
      uiUrl: `http://ui.test/namespaces/default/workflows/${delivery.id}`,
    });
    expect((await cli('show', delivery.id)).output).toContain(`UI         http://ui.test/namespaces/default/workflows/${delivery.id}`);

    expect(await cli('show', 'evt_does_not_exist')).toMatchObject({
      code: 1,
      error: 'No event evt_does_not_exist: no workflow has that ID in this namespace.',
    });
  });

  it('list: by source, type and status from visibility, and a raw --query', async () => {
    const held = await heldOrder();
    const running = (await cliJson('list', '--source', 'standard', '--type', 'order.created', '--status', 'running')) as unknown as Array<{ eventId: string }>;
    expect(running.map((event) => event.eventId)).toContain(held);
    const byQuery = (await cliJson('list', '--query', `WorkflowId = '${held}'`)) as unknown as Array<{ eventId: string; status: string }>;
    expect(byQuery).toEqual([expect.objectContaining({ eventId: held, status: 'running' })]);
    expect(await cli('list', '--since', 'yesterday')).toMatchObject({ code: 1, error: expect.stringContaining('"since" must be a duration') });
  });

  it('signal approve releases a held order, which is then charged once; query answers status', async () => {
    const held = await heldOrder();
    expect(await cliJson('query', held, 'status')).toMatchObject({ waitingFor: expect.stringContaining('approve or reject') });

    expect(await cli('signal', held, 'refund')).toMatchObject({
      code: 1,
      error: 'chargeOrder does not handle the signal "refund"; it accepts approve, reject, retryPayment.',
    });
    expect(await cli('signal', held, 'approve', '--data', '{"by":')).toMatchObject({ code: 1, error: expect.stringContaining('--data is not valid JSON') });
    expect((await stack.client.workflow.getHandle(held).describe()).status.name).toBe('RUNNING');

    expect(await cliJson('signal', held, 'approve', '--data', '{"by":"ops"}')).toEqual({ eventId: held, signal: 'approve', status: 'sent' });
    expect(await stack.client.workflow.getHandle(held).result()).toMatchObject({ outcome: 'charged' });
    expect(stack.stripe.charges().filter((intent) => intent.metadata.event_id === held)).toHaveLength(1);
  });

  it('cancel and terminate stop held orders; a closed event refuses both', async () => {
    const toCancel = await heldOrder();
    const toTerminate = await heldOrder();
    await cliJson('cancel', toCancel);
    await cliJson('terminate', toTerminate, '--reason', 'duplicate order placed by mistake');
    await expect(stack.client.workflow.getHandle(toCancel).result()).rejects.toThrow();
    expect((await stack.client.workflow.getHandle(toCancel).describe()).status.name).toBe('CANCELLED');
    expect((await stack.client.workflow.getHandle(toTerminate).describe()).status.name).toBe('TERMINATED');
    expect(await cli('cancel', toTerminate)).toMatchObject({ code: 1, error: expect.stringContaining('is terminated, not running') });
    expect(stack.stripe.charges().filter((intent) => [toCancel, toTerminate].includes(intent.metadata.event_id!))).toEqual([]);
    // The ledger says what happened to both, not "processing".
    const ledger = await stack.db.query('SELECT event_id, status, outcome FROM processed_events WHERE event_id = ANY($1) ORDER BY event_id = $2', [
      [toCancel, toTerminate],
      toTerminate,
    ]);
    expect(ledger.rows).toEqual([
      { event_id: toCancel, status: 'failed', outcome: { cancelled: true, errorClass: 'Cancelled' } },
      { event_id: toTerminate, status: 'failed', outcome: { terminated: 'duplicate order placed by mistake' } },
    ]);
  });

  it('reset --to last-failure re-runs a failed event after the cause is fixed, repeating nothing that succeeded', async () => {
    stack.resend.acceptApiKey('re_some_other_key');
    const failed = await failedPing();
    const shown = await cliJson('show', failed);
    expect(shown).toMatchObject({
      status: 'failed',
      failure: [expect.stringContaining('Activity task failed'), expect.stringMatching(/^EmailRejected: Resend refused the email: invalid_api_key/)],
    });
    const claimsBefore = (await stack.db.query('SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1', [failed])).rows;
    expect((await stack.db.query('SELECT status FROM processed_events WHERE event_id = $1', [failed])).rows).toEqual([{ status: 'failed' }]);

    stack.resend.acceptApiKey(undefined);
    expect(await cli('reset', failed, '--to', '999', '--reason', 'x')).toMatchObject({
      code: 1,
      error: expect.stringContaining('History event 999 is not a completed workflow task'),
    });
    const reset = await cliJson('reset', failed, '--to', 'last-failure', '--reason', 'Resend key fixed');
    expect(await stack.client.workflow.getHandle(failed, reset.runId as string).result()).toMatchObject({ outcome: 'notified' });

    expect(stack.resend.emails.filter((email) => email.idempotencyKey === failed)).toHaveLength(1);
    expect((await stack.db.query('SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1', [failed])).rows).toEqual(claimsBefore);
    expect((await stack.db.query('SELECT status FROM processed_events WHERE event_id = $1', [failed])).rows).toEqual([{ status: 'completed' }]);
  });

  it('reset --query: --dry-run lists what it would reset; without, a job resets every match; a query matching nothing changes nothing', async () => {
    stack.resend.acceptApiKey('re_some_other_key');
    const failed = [await failedPing(), await failedPing()];
    stack.resend.acceptApiKey(undefined);
    const query = `TaskQueue = '${stack.taskQueue}' AND WebhookEventType = 'ping' AND ExecutionStatus = 'Failed'`;

    const dryRun = await cli('reset', '--query', query, '--to', 'last-failure', '--reason', 'Resend key fixed', '--dry-run');
    expect(dryRun.code).toBe(0);
    expect(dryRun.output).toContain('Would reset 2 event(s) (a dry run, as asked); for example:');
    for (const id of failed) expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe('FAILED');

    const job = await cliJson('reset', '--query', query, '--to', 'last-failure', '--reason', 'Resend key fixed');
    expect(job).toMatchObject({ status: 'completed', state: 'completed', total: 2, done: 2, failed: 0 });
    for (const id of failed) expect(await stack.client.workflow.getHandle(id).result()).toMatchObject({ outcome: 'notified' });
    expect(stack.resend.emails.filter((email) => failed.includes(email.idempotencyKey!))).toHaveLength(2);
    // Their failed runs still match the query in visibility; their current runs do not. Found with
    // visibility queries alone, not a describe per event.
    const operations = new EventOperations(stack.client, { uiUrl: 'http://ui.test' });
    const describes = jest.spyOn(stack.client.workflow, 'getHandle');
    expect(await operations.list({ query })).toEqual([]);
    expect(await operations.list({ query: `TaskQueue = '${stack.taskQueue}' AND WebhookEventType = 'ping' AND ExecutionStatus = 'Completed'` })).toEqual(
      expect.arrayContaining(failed.map((eventId) => expect.objectContaining({ eventId, status: 'completed' }))),
    );
    expect(describes).not.toHaveBeenCalled();
    describes.mockRestore();

    expect(await cli('reset', '--query', `WorkflowId = 'evt_nothing_${randomUUID()}'`, '--to', 'first', '--reason', 'x', '--yes')).toMatchObject({
      code: 0,
      output: expect.stringMatching(/^Nothing to reset: no event matches .*; nothing to do\.$/m),
    });
  });
});

describe('/admin', () => {
  it('refuses a missing or wrong bearer token with 401', async () => {
    const missing = await fetch(`${stack.url}/admin/events`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="durable-webhooks admin"');
    expect((await admin('/events', {}, 'wrong-token')).status).toBe(401);
  });

  it('GET /admin/events/:eventId and GET /admin/events?…', async () => {
    const held = await heldOrder();
    const view = await admin(`/events/${held}`);
    expect(view.status).toBe(200);
    expect(await view.json()).toMatchObject({
      eventId: held,
      status: 'running',
      progress: { waitingFor: expect.any(String) },
      ledger: { status: 'processing' },
    });
    expect((await admin('/events/evt_unknown')).status).toBe(404);

    const list = (await (await admin(`/events?source=standard&status=running&query=${encodeURIComponent(`WorkflowId = '${held}'`)}`)).json()) as {
      events: Array<{ eventId: string }>;
    };
    expect(list.events.map((event) => event.eventId)).toEqual([held]);
    expect((await admin('/events?status=sleeping')).status).toBe(400);
    await admin(`/events/${held}/signals/reject`, { method: 'POST', body: '{}' });
  });

  it('POST /admin/events/:eventId/signals/:name approves a held order; unknown names and bad JSON are 400', async () => {
    const held = await heldOrder();
    expect((await admin(`/events/${held}/signals/refund`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect((await admin(`/events/${held}/signals/approve`, { method: 'POST', body: '{"by":' })).status).toBe(400);
    // The flow's declared check: what is sent is what it made of the input, never the input as given.
    const unchecked = await admin(`/events/${held}/signals/approve`, { method: 'POST', body: JSON.stringify({ by: 'ops', amount: 1 }) });
    expect(unchecked.status).toBe(400);
    expect(await unchecked.json()).toMatchObject({ detail: 'approve takes by, not amount.' });
    expect((await stack.client.workflow.getHandle(held).query(statusQuery)).waitingFor).toContain('approve or reject');
    const approved = await admin(`/events/${held}/signals/approve`, { method: 'POST', body: JSON.stringify({ by: 'ops' }) });
    expect(approved.status).toBe(202);
    expect(await stack.client.workflow.getHandle(held).result()).toMatchObject({ outcome: 'charged' });
  });

  it("POST /admin/events/:eventId/signals/apply to a subscription's entity takes only an update it can check", async () => {
    const subscriptionId = `sub_${randomUUID().slice(0, 8)}`;
    const created = subscriptionEvent(subscriptionId, 'created', 1_767_225_600, 'active');
    await deliver(created);
    await stack.client.workflow.getHandle(created.id).result();
    // An entity of the events started before keys (applySubscriptionEvent now stores in its key's turn).
    const entity = subscriptionWorkflowId(subscriptionId);
    await stack.client.workflow.signalWithStart(subscriptionEntity, {
      workflowId: entity,
      taskQueue: stack.taskQueue,
      args: [{ subscriptionId }],
      signal: applySignal,
      signalArgs: [{ source: 'stripe', eventId: created.id, created: 1_767_225_600, subscription: { id: subscriptionId, status: 'active' }, deleted: false }],
    });
    const state = () => stack.client.workflow.getHandle(entity).query(subscriptionStateQuery);
    await eventually('the entity applied the first update', async () => (await state()).status === 'active');

    const apply = (update: unknown) => admin(`/events/${encodeURIComponent(entity)}/signals/apply`, { method: 'POST', body: JSON.stringify(update) });
    const forged = await apply({ subscription: { id: subscriptionId, status: 'canceled' } });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ detail: 'source must name the source whose stored event this is.' });
    const elsewhere = await apply({
      source: 'stripe',
      eventId: created.id,
      created: 1_767_225_601,
      subscription: { id: 'sub_other', status: 'canceled' },
      deleted: false,
    });
    expect(await elsewhere.json()).toMatchObject({ status: 400, detail: `subscription.id must be the subscription of ${entity}.` });
    expect(await state()).toMatchObject({ status: 'active', updatesSeen: 1 });
  });

  it('POST /admin/events/:eventId/cancel, /terminate and /retry act as the CLI does: held orders stop, a completed event is left alone', async () => {
    const toCancel = await heldOrder();
    const toTerminate = await heldOrder();
    expect((await admin(`/events/${toCancel}/cancel`, { method: 'POST', body: '{}' })).status).toBe(202);
    expect((await admin(`/events/${toTerminate}/terminate`, { method: 'POST', body: '{}' })).status).toBe(400);
    const terminated = await admin(`/events/${toTerminate}/terminate`, { method: 'POST', body: JSON.stringify({ reason: 'placed twice' }) });
    expect({ status: terminated.status, body: await terminated.json() }).toEqual({ status: 200, body: { eventId: toTerminate, status: 'terminated' } });
    await expect(stack.client.workflow.getHandle(toCancel).result()).rejects.toThrow();
    expect((await stack.client.workflow.getHandle(toCancel).describe()).status.name).toBe('CANCELLED');
    expect((await stack.client.workflow.getHandle(toTerminate).describe()).status.name).toBe('TERMINATED');

    const completed = orderCreated();
    await deliver(completed);
    await stack.client.workflow.getHandle(completed.id).result();
    const retried = await admin(`/events/${completed.id}/retry`, { method: 'POST', body: '{}' });
    expect(await retried.json()).toEqual({ eventId: completed.id, outcome: 'skipped', detail: 'completed' });
    expect((await stack.client.workflow.getHandle(completed.id).describe()).status.name).toBe('COMPLETED');
  });

  it('POST /admin/events/:eventId/reset re-runs a completed event with no new side effect', async () => {
    const delivery = orderCreated();
    await deliver(delivery);
    await stack.client.workflow.getHandle(delivery.id).result();
    const before = { stripe: stack.stripe.requests.length, email: stack.resend.requests.length };

    expect((await admin(`/events/${delivery.id}/reset`, { method: 'POST', body: JSON.stringify({ to: 'first' }) })).status).toBe(400);
    expect((await admin(`/events/${delivery.id}/reset`, { method: 'POST', body: JSON.stringify({ to: 'sideways', reason: 'x' }) })).status).toBe(400);
    const response = await admin(`/events/${delivery.id}/reset`, { method: 'POST', body: JSON.stringify({ to: 'first', reason: 're-run' }) });
    expect(response.status).toBe(200);
    const { runId } = (await response.json()) as { runId: string };
    expect(await stack.client.workflow.getHandle(delivery.id, runId).result()).toMatchObject({ outcome: 'charged' });
    expect({ stripe: stack.stripe.requests.length, email: stack.resend.requests.length }).toEqual(before);
  });
});
