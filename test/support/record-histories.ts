import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  applySignal,
  approveSignal,
  deliveryWorkflowId,
  INTERNAL_WORKFLOW_ID_PREFIX,
  messageWorkflowId,
  ProviderKind,
  retryPaymentSignal,
  routeReplayWorkflowId,
  statusQuery,
  subscriptionStateQuery,
  subscriptionWorkflowId,
  subscriberWorkflowId,
  backfillWorkflowId,
  bulkJobWorkflowId,
  entityStateQuery,
  entityWorkflowId,
  requestTurnSignal,
  turnDoneSignal,
  type TurnRequest,
} from '../../contracts';
import { backfill, bulkAction, buildCheck, keyEntity, reconcile, recordCheckoutRefund, replayRoute, routeEvent, subscriptionEntity } from '../../workflows';
import { send } from '../../src/cli/send';
import { loadReceiverConfig } from '../../src/config';
import { FLOWS, Router } from '../../src/flows';
import { startOptions } from '../../src/intake/start-data';
import { DECLINED_PAYMENT_METHOD, type StripeEvent } from '../../src/dev/stripe-objects';
import { temporalCliPath } from '../../src/core/tools';
import { startEndpointServer } from './endpoint-server';
import { eventually } from './eventually';
import { checkoutCompleted, customerThin, customerUpdated, orderCreated, shopifyOrderPaid, subscriptionEvent, type SignedDelivery } from './events';
import { CATALOG_SECRETS_ENV, githubHeaders, SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from './signing';
import { post, startStack } from './stack';
import { startScriptServers } from './script-stack';

/** Where the replay test (test/production/replay.test.ts) reads the recorded histories. */
export const HISTORIES_DIR = path.resolve(__dirname, '../production/histories');

/**
 * `npm run record-histories`: runs every workflow type through its flows on a fresh dev server and
 * writes each history as Temporal's JSON (what `temporal workflow show -o json` prints): the
 * scenarios below, then every event flow of FLOWS none of them ran, from its declaration. Record
 * again only for a new workflow or a new path through one; the committed files are what today's
 * code must still replay.
 */
async function main(): Promise<void> {
  const servers = await startScriptServers('record');
  const { server } = servers;

  // A short payment retry window, so the declined order ends (declined) while this runs.
  const stack = await startStack({
    env: {
      ...CATALOG_SECRETS_ENV,
      REVIEW_THRESHOLD: '100000',
      REVIEW_TIMEOUT: '1h',
      PAYMENT_RETRY_WINDOW: '10s',
      API_TOKENS: 'record:tok_record_0123456789abcdef0123456789',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
    },
  });
  const recorded: Record<string, string> = {};
  const deliver = async (name: string, delivery: SignedDelivery) => {
    await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
    recorded[name] = delivery.id;
    await stack.client.workflow
      .getHandle(delivery.id)
      .result()
      .catch(() => undefined);
  };

  await deliver('fulfilCheckout', checkoutCompleted());
  await deliver('fulfilShopifyOrder', shopifyOrderPaid());
  // A keyed flow's event holding its key, and its key's entity: the paid state holds the key (its
  // email held back) while an older one comes, waits in the entity, and is superseded once the
  // entity has the key.
  const paid = shopifyOrderPaid({ topic: 'orders/paid', updatedAt: '2026-12-01T10:05:00-05:00' });
  const olderState = shopifyOrderPaid({ topic: 'orders/create', orderId: paid.orderId, financialStatus: 'pending', updatedAt: '2026-12-01T10:01:00-05:00' });
  const emailHeld = stack.resend.holdNext();
  const paidDone = deliver('fulfilShopifyOrder-keyed', paid);
  const release = await emailHeld;
  await post(`${stack.url}/webhooks/${olderState.path}`, olderState.headers, olderState.body);
  recorded.keyEntity = entityWorkflowId('fulfilShopifyOrder', 'shopify', String(paid.orderId));
  // The entity answers once the older state's signal-with-start has reached the server (not found before that).
  await eventually('the older state waits in the entity', () =>
    stack.client.workflow
      .getHandle(recorded.keyEntity!)
      .query(entityStateQuery)
      .then(
        (state) => state.pending.some((request) => request.eventId === olderState.id),
        () => false,
      ),
  );
  release();
  await paidDone;
  await deliver('fulfilShopifyOrder-superseded', olderState);
  await stack.client.workflow.getHandle(recorded.keyEntity).result();
  // A coalescing key: two updates of one customer in one burst, the newer stored, the older superseded.
  const customerId = `cus_${randomUUID()}`;
  await Promise.all([
    deliver('syncStripeCustomer-superseded', customerUpdated(customerId, 1_800_000_000, 100)),
    deliver('syncStripeCustomer', customerUpdated(customerId, 1_800_000_001, 200)),
  ]);
  recorded['keyEntity-coalesce'] = entityWorkflowId('syncStripeCustomer', 'stripe', customerId);
  recorded['keyEntity-serial-stored'] = await serialKeyBeyondItsCarry(stack);
  // A thin event: its customer fetched from Stripe (the stand-in) as it is now.
  await deliver('refreshStripeCustomer', customerThin(customerId));
  await deliver('chargeOrder-charged', orderCreated());
  await deliver('chargeOrder-declined', orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD }));

  const retried = orderCreated({ paymentMethod: DECLINED_PAYMENT_METHOD });
  await post(`${stack.url}/webhooks/standard`, retried.headers, retried.body);
  const retrying = stack.client.workflow.getHandle(retried.id);
  await eventually('the order waits for retryPayment', async () => (await retrying.query(statusQuery)).awaiting !== null);
  await retrying.signal(retryPaymentSignal, { paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 });
  await retrying.result();
  recorded['chargeOrder-retried'] = retried.id;

  const held = orderCreated({ amount: 150_000 });
  await post(`${stack.url}/webhooks/standard`, held.headers, held.body);
  const handle = stack.client.workflow.getHandle(held.id);
  await eventually('the order waits for approval', async () => (await handle.query(statusQuery)).waitingFor !== null);
  await handle.signal(approveSignal, { by: 'ops' });
  await handle.result();
  recorded['chargeOrder-approved'] = held.id;

  const delivery = randomUUID();
  const issue = JSON.stringify({
    action: 'opened',
    issue: { number: 1, title: 'Refund', html_url: 'https://github.com/o/r/issues/1', user: { login: 'octocat' } },
    repository: { full_name: 'o/r' },
  });
  await deliver('notifyGitHub', {
    id: delivery,
    path: 'github',
    body: issue,
    headers: await githubHeaders(issue, SECRETS.github, { delivery, event: 'issues' }),
  });

  // A flow that fails (the email API refuses the key): its history upserts its failure class. Not a
  // checkout, which the bulk retry below would reset and finish.
  const failing = randomUUID();
  const failingIssue = JSON.stringify({
    action: 'opened',
    issue: { number: 2, title: 'Chargeback', html_url: 'https://github.com/o/r/issues/2', user: { login: 'octocat' } },
    repository: { full_name: 'o/r' },
    installation: { id: 42 },
  });
  stack.resend.acceptApiKey('re_not_the_one_in_use');
  await deliver('notifyGitHub-failed', {
    id: failing,
    path: 'github',
    body: failingIssue,
    headers: await githubHeaders(failingIssue, SECRETS.github, { delivery: failing, event: 'issues' }),
  });
  stack.resend.acceptApiKey(undefined);

  const invoice = stripeEvent({ type: 'invoice.paid' });
  const invoiceBody = JSON.stringify(invoice);
  await deliver('recordEvent', { id: invoice.id as string, path: 'stripe', body: invoiceBody, headers: stripeHeaders(invoiceBody, SECRETS.stripe) });

  // An event whose route chose its flows by filter (docs/flows.md#routes): its own workflow starts
  // the one the filters took as a subscriber, and records the one they did not.
  const routedInvoice = stripeEvent({ type: 'invoice.paid' });
  const routedAt = new Date().toISOString();
  const routed = await stack.client.workflow.start(routeEvent, {
    workflowId: routedInvoice.id as string,
    taskQueue: stack.taskQueue,
    args: [
      {
        source: 'stripe',
        provider: ProviderKind.STRIPE,
        id: routedInvoice.id as string,
        type: 'invoice.paid',
        occurredAt: routedAt,
        receivedAt: routedAt,
        fields: {},
        routes: { flows: [{ flow: 'recordEvent', fields: {}, summary: 'stripe · invoice.paid · recordEvent' }], filtered: ['notifyGitHub'], failures: [] },
      },
    ],
  });
  await routed.result();
  await stack.client.workflow.getHandle(subscriberWorkflowId(routed.workflowId, 'recordEvent')).result();
  recorded.routeEvent = routed.workflowId;

  // A checkout that waits for its refund (docs/flows.md#wait-for-another-event): it registers its
  // wait, then the refund delivered after matches it, and it records the refund.
  const refundedIntent = `pi_${randomUUID().replace(/-/g, '')}`;
  const refundable = JSON.parse(checkoutCompleted({ paymentIntent: refundedIntent }).body) as StripeEvent;
  const { options: refundableStart } = startOptions(
    {
      source: 'stripe',
      provider: ProviderKind.STRIPE,
      id: refundable.id,
      type: refundable.type,
      occurredAt: routedAt,
      receivedAt: routedAt,
      payload: refundable,
    },
    { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE, { 'checkout.session.completed': 'recordCheckoutRefund' }) },
    'delivery',
    stack.taskQueue,
  );
  const waitingCheckout = await stack.client.workflow.start(recordCheckoutRefund, refundableStart);
  await eventually('the checkout waits for its refund', async () => (await waitingCheckout.query(statusQuery)).waitingFor !== null);
  const refund = stripeEvent({
    type: 'charge.refunded',
    data: { object: { id: `ch_${randomUUID()}`, payment_intent: refundedIntent, amount_refunded: 4200, currency: 'eur' } },
  });
  const refundBody = JSON.stringify(refund);
  await post(`${stack.url}/webhooks/stripe`, stripeHeaders(refundBody, SECRETS.stripe), refundBody);
  await waitingCheckout.result();
  recorded.recordCheckoutRefund = waitingCheckout.workflowId;

  // A route replay over the invoices stored above: the one recordEvent ran for on arrival is skipped, then the window ends.
  const replay = await stack.client.workflow.start(replayRoute, {
    workflowId: routeReplayWorkflowId('recordEvent', 'record'),
    taskQueue: stack.taskQueue,
    args: [
      {
        flow: 'recordEvent',
        window: { since: new Date(Date.now() - 3_600_000).toISOString(), until: new Date().toISOString(), source: 'stripe', type: 'invoice.paid' },
        sources: [{ name: 'stripe', kind: ProviderKind.STRIPE, routes: { 'invoice.paid': [{ flow: 'recordEvent', if: 'body.object == "event"' }] } }],
        rate: 10,
        by: 'record-histories',
      },
    ],
  });
  await replay.result();
  recorded.replayRoute = replay.workflowId;

  // A subscription's events in its key's turns, the newest first; and the entity of the events
  // started before keys, given the same two updates as they handed it.
  const subscriptionId = `sub_${randomUUID()}`;
  const newest = subscriptionEvent(subscriptionId, 'updated', 1_700_000_300, 'past_due');
  const older = subscriptionEvent(subscriptionId, 'created', 1_700_000_100, 'incomplete');
  await deliver('applySubscriptionEvent-keyed', newest);
  await deliver('applySubscriptionEvent-superseded', older);
  const update = (delivery: SignedDelivery, created: number, status: string) => ({
    source: 'stripe',
    eventId: delivery.id,
    created,
    subscription: { id: subscriptionId, status },
    deleted: false,
  });
  const entity = await stack.client.workflow.signalWithStart(subscriptionEntity, {
    workflowId: subscriptionWorkflowId(subscriptionId),
    taskQueue: stack.taskQueue,
    args: [{ subscriptionId }],
    signal: applySignal,
    signalArgs: [update(newest, 1_700_000_300, 'past_due')],
  });
  await entity.signal(applySignal, update(older, 1_700_000_100, 'incomplete'));
  await eventually('the entity applied both', async () => (await entity.query(subscriptionStateQuery)).updatesSeen === 2);
  recorded.subscriptionEntity = entity.workflowId;

  const endpoint = await startEndpointServer([500]);
  const api = (route: string, body: unknown, key?: string) =>
    fetch(`${stack.url}/v1${route}`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok_record_0123456789abcdef0123456789', 'content-type': 'application/json', ...(key && { 'idempotency-key': key }) },
      body: JSON.stringify(body),
    });
  const { id: endpointId } = (await (await api('/endpoints', { url: endpoint.url, eventTypes: ['order.shipped'] })).json()) as { id: string };
  const { id: messageId } = (await (await api('/messages', { eventType: 'order.shipped', payload: { orderId: 'ord_1' } }, 'record-1')).json()) as {
    id: string;
  };
  const deliveryId = deliveryWorkflowId(messageWorkflowId(messageId), endpointId);
  await stack.client.workflow.getHandle(messageWorkflowId(messageId)).result();
  await stack.client.workflow.getHandle(deliveryId).result();
  recorded.publishMessage = messageWorkflowId(messageId);
  recorded.deliverMessage = deliveryId;

  const missed = JSON.parse(checkoutCompleted().body) as StripeEvent;
  stack.stripe.addEvents(missed);
  const reconciliation = await stack.client.workflow.start(reconcile, {
    workflowId: `${INTERNAL_WORKFLOW_ID_PREFIX}reconcile-record`,
    taskQueue: stack.taskQueue,
    args: [{ provider: 'stripe', lookbackMs: 3_600_000 }],
  });
  await reconciliation.result();
  await stack.client.workflow.getHandle(missed.id).result();
  recorded.reconcile = reconciliation.workflowId;

  const requested = JSON.parse(checkoutCompleted().body) as StripeEvent;
  stack.stripe.addEvents(requested);
  const backfilled = await stack.client.workflow.start(backfill, {
    workflowId: backfillWorkflowId('stripe'),
    taskQueue: stack.taskQueue,
    args: [{ provider: 'stripe', since: new Date(Date.now() - 3_600_000).toISOString(), types: ['checkout.session.completed'], mode: 'start' }],
  });
  await backfilled.result();
  await stack.client.workflow.getHandle(requested.id).result();
  recorded.backfill = backfilled.workflowId;

  // A bulk retry of the checkouts above, all completed: listed, each skipped, a timer between batches.
  const bulk = await stack.client.workflow.start(bulkAction, {
    workflowId: bulkJobWorkflowId('retry', 'record'),
    taskQueue: stack.taskQueue,
    args: [
      {
        action: 'retry',
        filter: { query: `TaskQueue = '${stack.taskQueue}'`, type: 'checkout.session.completed' },
        reason: 'record',
        rate: 5,
        by: 'record-histories',
      },
    ],
  });
  await bulk.result();
  recorded.bulkAction = bulk.workflowId;

  const check = await stack.client.workflow.start(buildCheck, { workflowId: `${INTERNAL_WORKFLOW_ID_PREFIX}build-check:record`, taskQueue: stack.taskQueue });
  await check.result();
  recorded.buildCheck = check.workflowId;

  // Every other event flow (one added since, as docs/add-a-flow.md adds one): its first declared
  // event type, sent as `durable-webhooks send` sends it; a flow still waiting (for a signal, a
  // timer) after 10 s is recorded as far as it got, which is as much a history to replay.
  const covered = new Set(await Promise.all(Object.values(recorded).map(async (id) => (await stack.client.workflow.getHandle(id).describe()).type)));
  const config = loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV }, { development: true });
  for (const flow of FLOWS.filter((flow) => !flow.internal && !covered.has(flow.name))) {
    const [kind, types] = Object.entries(flow.handles)[0] ?? [];
    const source = config.sources.find((candidate) => candidate.kind === kind && candidate.workflowIdPrefix === '');
    if (!source || !types?.[0]) throw new Error(`${flow.name} declares no event type of a built-in source to record it with.`);
    const [attempt] = await send(config, { source: source.name, fixtureOrType: types[0], repeat: 1, url: stack.url }, () => undefined);
    const { workflowId } = attempt!.body as { workflowId: string };
    // Polled, not awaited: a long poll still open when the stack closes ends the process with an error.
    for (const giveUpAt = Date.now() + 10_000; Date.now() < giveUpAt; await delay(200)) {
      if ((await stack.client.workflow.getHandle(workflowId).describe()).status.name !== 'RUNNING') break;
    }
    recorded[flow.name] = workflowId;
  }

  mkdirSync(HISTORIES_DIR, { recursive: true });
  // `npm run record-histories -- backfill` writes only the histories named, leaving the others as recorded before.
  const only = process.argv.slice(2);
  for (const [name, workflowId] of Object.entries(recorded).filter(([name]) => only.length === 0 || only.includes(name))) {
    const json = execFileSync(temporalCliPath(), ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', server.address], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), json);
    console.log(`recorded ${name} (${(JSON.parse(json) as { events: unknown[] }).events.length} events)`);
  }

  await endpoint.close();
  await stack.close();
  await servers.stop();
}

/**
 * A `serial` key whose waiting requests pass what its entity's run carries (2 here): the newer ones
 * wait in the database and are taken back as their turns come. Its events are stand-ins: the one
 * running is a workflow open on a queue nobody polls, the others' workflows do not exist (their
 * turns go nowhere).
 */
async function serialKeyBeyondItsCarry(stack: Awaited<ReturnType<typeof startStack>>): Promise<string> {
  const key = `serial-${randomUUID()}`;
  const request = (eventId: string, version: number): TurnRequest => ({ eventId, workflowId: eventId, type: 'orders/updated', version: [version] });
  const running = await stack.client.workflow.start('slowEvent', { workflowId: `record-${key}-0`, taskQueue: 'nobody-polls' });
  const entity = await stack.client.workflow.signalWithStart(keyEntity, {
    workflowId: entityWorkflowId('fulfilShopifyOrder', 'shopify', key),
    taskQueue: stack.taskQueue,
    args: [{ flow: 'fulfilShopifyOrder', source: 'shopify', key, order: 'serial', carry: 2 }],
    signal: requestTurnSignal,
    signalArgs: [request(running.workflowId, 0)],
  });
  await eventually('the first event has its turn', async () => (await entity.query(entityStateQuery)).running?.eventId === running.workflowId);
  for (const version of [5, 3, 4, 1, 2]) await entity.signal(requestTurnSignal, request(`record-${key}-${version}`, version));
  await eventually('the newer ones wait in the database', async () => {
    const { pending, stored } = await entity.query(entityStateQuery);
    return stored !== null && pending.length + stored.count === 5;
  });
  await entity.signal(turnDoneSignal, { eventId: running.workflowId, failure: null });
  await entity.result();
  await running.terminate('recorded');
  return entity.workflowId;
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
