import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { statusQuery, subscriberWorkflowId } from '../../contracts';
import { silentLogger } from '../../src/core/logger';
import { StartSweeper } from '../../src/intake/sweeper';
import { EventWaits, indexStoredEvents, waitKey } from '../../src/intake/waits';
import { recordCheckoutRefundFlow } from '../../workflows';
import { consolePage as consoleAt } from '../support/console-page';
import { eventually } from '../support/eventually';
import { codeBlocks, consoleCommands } from '../support/markdown';
import { ROOT, runShell } from '../support/processes';
import { stripeEvent, stripeHeaders } from '../support/signing';
import { post, resultOnceStarted, startStack, type WorkerStack } from '../support/stack';
import { storeStripeEvent } from '../support/stored-events';

/**
 * Waits for another event (docs/flows.md#wait-for-another-event), on the dev server and PostgreSQL:
 * `recordCheckoutRefund` waits for the refund of its checkout's PaymentIntent, which came before
 * the wait began or comes while it lasts, once; the docs' guide runs literally; a match Temporal did
 * not take, or an event nobody matched, is done by the sweepers.
 */
const SECRET = 'whsec_waits';
const ADMIN_TOKEN = 'waits-test-admin-token-0123456789abcdef';
const guide = codeBlocks(readFileSync(path.join(ROOT, 'docs/flows.md'), 'utf8'));
const guideConfig = guide.find((block) => block.lang === 'yaml' && block.attributes.config === 'waits')!;
const guideCommands = consoleCommands(guide.find((block) => block.lang === 'console' && block.attributes.config === 'waits')!);
const config = path.join(mkdtempSync(path.join(tmpdir(), 'dw-waits-')), 'webhooks.yaml');
writeFileSync(config, guideConfig.text);

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOKS_CONFIG: config, SHOP_WEBHOOK_SECRET: SECRET, ADMIN_TOKEN } });
});
afterAll(() => stack?.close());

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const paymentIntent = () => `pi_${randomUUID().replace(/-/g, '')}`;
function signed(type: string, object: Record<string, unknown>) {
  const event = stripeEvent({ type, data: { object } });
  const body = JSON.stringify(event);
  return { id: event.id as string, body, headers: stripeHeaders(body, SECRET) };
}
const checkout = (pi: string, orderId = `ord_${randomUUID()}`) =>
  signed('checkout.session.completed', {
    id: `cs_${randomUUID()}`,
    amount_total: 4200,
    currency: 'eur',
    payment_intent: pi,
    customer_details: { email: 'ada@example.com' },
    metadata: { order_id: orderId },
  });
const refund = (pi: string) => signed('charge.refunded', { id: `ch_${randomUUID()}`, payment_intent: pi, amount_refunded: 4200, currency: 'eur' });
const deliver = (delivery: { headers: Record<string, string>; body: string }) => post(`${stack.url}/webhooks/shop`, delivery.headers, delivery.body);
const waiting = (checkoutId: string) => subscriberWorkflowId(checkoutId, recordCheckoutRefundFlow.name);
const refunds = async (orderId: string) =>
  (await stack.db.query<{ refund_event_id: string }>('SELECT refund_event_id FROM order_refunds WHERE order_id = $1', [orderId])).rows.map(
    (row) => row.refund_event_id,
  );
const waiter = async (workflowId: string) =>
  (
    await stack.db.query<{ status: string; matched_event: string | null; signalled_at: Date | null }>(
      "SELECT status, matched->>'eventId' AS matched_event, signalled_at FROM waiters WHERE workflow_id = $1",
      [workflowId],
    )
  ).rows[0];
const consolePage = (pathname: string) => consoleAt(stack.url, ADMIN_TOKEN, pathname);
/** The run's status query once it waits, as `events show` and the console read it. */
async function waitingFor(workflowId: string): Promise<string> {
  let text: string | null = null;
  await eventually(`${workflowId} waits`, async () => {
    text = await stack.client.workflow
      .getHandle(workflowId)
      .query(statusQuery)
      .then((progress) => progress.waitingFor)
      .catch(() => null);
    return text !== null;
  });
  return text!;
}

/** A `charge.refunded` stored in the inbox as a receiver does, without the intake's matching after it. */
const storeRefund = (id: string, raw: Buffer, options: { receivedAt: Date; waitKeys: string[] | undefined }) =>
  storeStripeEvent(stack.db, { source: 'shop', id, type: 'charge.refunded', raw, ...options });
const refundBody = (id: string, pi: string, amount: number) =>
  Buffer.from(
    JSON.stringify({
      id,
      type: 'charge.refunded',
      data: { object: { id: `ch_${randomUUID()}`, payment_intent: pi, amount_refunded: amount, currency: 'eur' } },
    }),
  );

it("docs/flows.md's guide, run literally: the checkout waits for its refund; the refund resolves it and is recorded against the order once", async () => {
  const env = { WEBHOOKS_CONFIG: config, SHOP_WEBHOOK_SECRET: SECRET, PORT: new URL(stack.url).port, DATABASE_URL: stack.workerEnv.DATABASE_URL };
  for (const { command, prints } of guideCommands) {
    // A command that shows a run is run again until the run got where the page shows it.
    await eventually(command, async () => {
      const { code, output } = await runShell(command, env, ROOT);
      return code === 0 && prints.filter((line) => line !== '…').every((line) => output.includes(line.endsWith('…') ? line.slice(0, -1) : line));
    });
  }
  const guideCheckout = 'evt_1RefundGuideCheckout';
  expect(await stack.client.workflow.getHandle(waiting(guideCheckout)).result()).toMatchObject({ outcome: 'refunded' });
  expect(await refunds('ord_1001')).toEqual(['evt_1RefundGuideRefund']);

  // The refund redelivered is a duplicate; a second refund of the same PaymentIntent finds the wait matched.
  const again = await runShell(`npx durable-webhooks send shop charge.refunded --id evt_1RefundGuideRefund --json`, env, ROOT);
  expect(JSON.parse(again.output.trim())).toMatchObject({ status: 200, body: { status: 'duplicate' } });
  const second = await runShell(`npx durable-webhooks send shop charge.refunded --id evt_1RefundGuideRefundAgain --json`, env, ROOT);
  expect(JSON.parse(second.output.trim())).toMatchObject({ status: 202 });
  await eventually('the second refund is matched against the waiters', async () => {
    const { rows } = await stack.db.query(`SELECT 1 FROM event_bodies WHERE event_id = 'evt_1RefundGuideRefundAgain' AND waits_matched_at IS NOT NULL`);
    return rows.length === 1;
  });
  expect(await waiter(waiting(guideCheckout))).toMatchObject({ status: 'matched', matched_event: 'evt_1RefundGuideRefund' });
  expect(await refunds('ord_1001')).toEqual(['evt_1RefundGuideRefund']);
});

it('a refund stored 10 minutes before the checkout resolves its wait at once, with no signal', async () => {
  const pi = paymentIntent();
  const orderId = `ord_${randomUUID()}`;
  const early = refund(pi);
  expect(await deliver(early)).toMatchObject({ status: 202 });
  await stack.db.query(`UPDATE event_bodies SET received_at = now() - interval '10 minutes' WHERE event_id = $1`, [early.id]);

  const late = checkout(pi, orderId);
  expect(await deliver(late)).toMatchObject({ status: 202 });
  expect(await resultOnceStarted(stack.client, waiting(late.id))).toMatchObject({ outcome: 'refunded' });
  expect(await refunds(orderId)).toEqual([early.id]);
  expect(await waiter(waiting(late.id))).toMatchObject({ status: 'matched', matched_event: early.id, signalled_at: expect.any(Date) });
  const history = await stack.client.workflow.getHandle(waiting(late.id)).fetchHistory();
  expect(history.events!.filter((event) => event.workflowExecutionSignaledEventAttributes)).toHaveLength(0);
});

it('a wait shows in events show and the console with its expression; a refund that arrives later resolves it on arrival', async () => {
  const pi = paymentIntent();
  const orderId = `ord_${randomUUID()}`;
  const first = checkout(pi, orderId);
  expect(await deliver(first)).toMatchObject({ status: 202 });
  const text = await waitingFor(waiting(first.id));
  expect(text).toBe(`charge.refunded where ${recordCheckoutRefundFlow.wait('refund').match} (waiting.paymentIntent = "${pi}")`);
  const shown = await runShell(`npx durable-webhooks events show ${waiting(first.id)} --json`, { DATABASE_URL: stack.workerEnv.DATABASE_URL }, ROOT);
  const { progress } = JSON.parse(shown.output) as { progress: { waitingFor: string; awaiting: { until: string } } };
  expect(progress).toMatchObject({ waitingFor: text, awaiting: { until: expect.any(String) } });
  const page = await consolePage(`/events/${encodeURIComponent(waiting(first.id))}`);
  expect(page).toContain(`<dt>Waiting for</dt><dd>${escapeHtml(text)}, until ${progress.awaiting.until}</dd>`);

  // Another PaymentIntent's refund is not this checkout's.
  expect(await deliver(refund(paymentIntent()))).toMatchObject({ status: 202 });
  const arriving = refund(pi);
  expect(await deliver(arriving)).toMatchObject({ status: 202 });
  expect(await stack.client.workflow.getHandle(waiting(first.id)).result()).toMatchObject({ outcome: 'refunded' });
  expect(await refunds(orderId)).toEqual([arriving.id]);
  expect(await waiter(waiting(first.id))).toMatchObject({ status: 'matched', matched_event: arriving.id, signalled_at: expect.any(Date) });
});

it('an event stored by a receiver that died before matching it, and a match Temporal did not take, are done by a sweeper', async () => {
  const pi = paymentIntent();
  const orderId = `ord_${randomUUID()}`;
  const first = checkout(pi, orderId);
  expect(await deliver(first)).toMatchObject({ status: 202 });
  await waitingFor(waiting(first.id));

  // The refund is committed to the inbox, and its receiver dies before it matches the waiters.
  const { id } = refund(pi);
  await storeRefund(id, refundBody(id, pi, 1200), { receivedAt: new Date(), waitKeys: [waitKey('/data/object/payment_intent', pi)] });

  // A sweeper matches it while Temporal is away: the match is recorded, the signal is not taken.
  const away = new Error('14 UNAVAILABLE: Temporal is away');
  const awayClient = { workflow: { getHandle: () => ({ signal: () => Promise.reject(away) }) } } as unknown as Client;
  expect(await new EventWaits(stack.db, awayClient, silentLogger).sweep(100, 0)).toMatchObject({ signals: 0 });
  expect(await waiter(waiting(first.id))).toMatchObject({ status: 'matched', matched_event: id, signalled_at: null });
  expect((await stack.client.workflow.getHandle(waiting(first.id)).describe()).status.name).toBe('RUNNING');

  // Temporal is back: the next pass sends it, and the one after sends it no more.
  const waits = new EventWaits(stack.db, stack.client, silentLogger);
  expect((await waits.sweep(100, 0)).signals).toBeGreaterThanOrEqual(1);
  expect(await stack.client.workflow.getHandle(waiting(first.id)).result()).toMatchObject({ outcome: 'refunded' });
  expect(await refunds(orderId)).toEqual([id]);
  const { signalled_at } = (await waiter(waiting(first.id)))!;
  expect(signalled_at).toEqual(expect.any(Date));
  await waits.sweep(100, 0);
  expect(await waiter(waiting(first.id))).toMatchObject({ signalled_at });
});

it('an event stored before a build declared a wait on its type is indexed when a sweeper starts, and one an older receiver stored after, at the next pass; each matches its wait', async () => {
  const pi = paymentIntent();
  const orderId = `ord_${randomUUID()}`;
  // A refund an hour old, stored by a build with no wait on charge.refunded: no keys.
  const { id } = refund(pi);
  await storeRefund(id, refundBody(id, pi, 900), { receivedAt: new Date(Date.now() - 3_600_000), waitKeys: undefined });
  await stack.db.query('DELETE FROM wait_indexes');

  const first = checkout(pi, orderId);
  expect(await deliver(first)).toMatchObject({ status: 202 });
  await waitingFor(waiting(first.id));

  // The new build's first sweeper indexes the stored refunds once, and matches this one.
  const sweeper = new StartSweeper(stack.db, stack.client, { taskQueue: stack.taskQueue, logger: silentLogger });
  await sweeper.start();
  try {
    expect(await stack.client.workflow.getHandle(waiting(first.id)).result()).toMatchObject({ outcome: 'refunded' });
  } finally {
    await sweeper.stop();
  }
  expect(await refunds(orderId)).toEqual([id]);
  const { rows } = await stack.db.query<{ wait_keys: string[] }>('SELECT wait_keys FROM event_bodies WHERE event_id = $1', [id]);
  expect(rows).toEqual([{ wait_keys: [waitKey('/data/object/payment_intent', pi)] }]);
  expect(await indexStoredEvents(stack.db)).toBe(0);

  // A receiver still on the older build stores a refund after that pass: the next pass gives it its keys, and a sweeper matches it.
  const later = `ord_${randomUUID()}`;
  const laterPi = paymentIntent();
  const laterCheckout = checkout(laterPi, later);
  expect(await deliver(laterCheckout)).toMatchObject({ status: 202 });
  await waitingFor(waiting(laterCheckout.id));
  const { id: lateRefund } = refund(laterPi);
  await storeRefund(lateRefund, refundBody(lateRefund, laterPi, 300), { receivedAt: new Date(Date.now() - 60_000), waitKeys: undefined });
  expect(await indexStoredEvents(stack.db)).toBe(1);
  await new EventWaits(stack.db, stack.client, silentLogger).sweep(100, 0);
  expect(await stack.client.workflow.getHandle(waiting(laterCheckout.id)).result()).toMatchObject({ outcome: 'refunded' });
  expect(await refunds(later)).toEqual([lateRefund]);
});

it('an awaited event whose stored body cannot be read matches no wait, and is not tried again at every pass', async () => {
  const pi = paymentIntent();
  const first = checkout(pi);
  expect(await deliver(first)).toMatchObject({ status: 202 });
  await waitingFor(waiting(first.id));
  const id = `evt_unreadable_${randomUUID()}`;
  await storeRefund(id, Buffer.from('{"data": not json'), {
    receivedAt: new Date(Date.now() - 60_000),
    waitKeys: [waitKey('/data/object/payment_intent', pi)],
  });

  await new EventWaits(stack.db, stack.client, silentLogger).sweep(100, 0);
  const { rows } = await stack.db.query('SELECT 1 FROM event_bodies WHERE event_id = $1 AND waits_matched_at IS NOT NULL', [id]);
  expect(rows).toHaveLength(1);
  expect(await waiter(waiting(first.id))).toMatchObject({ status: 'waiting', matched_event: null });
});
