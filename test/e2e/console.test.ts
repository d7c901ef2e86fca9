import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { statusQuery } from '../../contracts';
import { checkoutCompleted, orderCreated, shopifyOrderPaid } from '../support/events';
import { eventually } from '../support/eventually';
import { runCli } from '../support/processes';
import { CATALOG_SECRETS, SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';
import { Webhook } from 'standardwebhooks';
import { newSecret } from '../../src/db/endpoints';
import { EVENT_ACTIONS } from '../../src/operator/event-actions';
import { startEndpointServer } from '../support/endpoint-server';

/**
 * The event console in a real browser (Debian's Chromium, driven by playwright-core) on a stack with
 * a worker: an operator signs in, finds events, acts on them, and a viewer can act on nothing.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ADMIN_TOKEN = 'console-admin-token-0123456789abcdef0123456789';
const VIEWER_TOKEN = 'console-viewer-token-0123456789abcdef012345678';
let stack: WorkerStack;
let browser: Browser;
let alerts: Awaited<ReturnType<typeof startEndpointServer>>;
const ALERT_SECRET = newSecret();

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH.`);
  alerts = await startEndpointServer();
  stack = await startStack({
    env: {
      ADMIN_TOKEN,
      VIEWER_TOKENS: `oncall:${VIEWER_TOKEN}`,
      REVIEW_THRESHOLD: '100000',
      ALERT_WEBHOOK_URL: alerts.url,
      ALERT_WEBHOOK_SECRET: ALERT_SECRET,
      ALERT_INTERVAL: '1s',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      SHOPIFY_WEBHOOK_SECRET: CATALOG_SECRETS.shopify,
    },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await alerts?.close();
});

/** A signed-in page that fails the test on any dialog, script error or console error. */
async function signedIn(token = ADMIN_TOKEN): Promise<Page & { problems: string[] }> {
  const page = Object.assign(await browser.newPage({ viewport: { width: 1400, height: 1000 } }), { problems: [] as string[] });
  page.on('dialog', (dialog) => {
    page.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console error: ${message.text()}`);
  });
  await page.goto(`${stack.url}/console`);
  await page.getByLabel('Admin or viewer token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

const eventUrl = (id: string) => `${stack.url}/console/events/${encodeURIComponent(id)}`;

it('signs in; an event sent with the CLI appears, completed, with the Stripe Idempotency-Key equal to its event ID', async () => {
  const page = await signedIn();
  const eventId = `evt_console_${randomUUID().slice(0, 8)}`;
  const sent = await runCli(['send', 'stripe', 'checkout.session.completed', '--id', eventId, '--url', stack.url], SECRETS_ENV);
  expect(sent).toMatchObject({ code: 0 });
  await stack.client.workflow.getHandle(eventId).result();

  await page.goto(`${stack.url}/console/events?source=stripe`);
  await page.getByRole('link', { name: eventId }).click();
  await page.getByRole('heading', { name: `Event ${eventId}` }).waitFor();
  await expect(page.locator('.facts .status').first().textContent()).resolves.toBe('completed');
  // The Stripe call and the email carried the event's ID as their Idempotency-Key.
  await expect(page.locator('table.keys tr', { hasText: 'mark-fulfilled' }).locator('code.key').textContent()).resolves.toBe(eventId);
  expect(new Set(await page.locator('table.keys code.key').allTextContents())).toEqual(new Set([eventId]));
  await expect(page.locator('.verification').textContent()).resolves.toMatch(/^yes/);
  // The chart of the overview is drawn by Chart.js from the console's own JSON.
  await page.goto(`${stack.url}/console`);
  await page.locator('canvas[data-drawn="true"]').waitFor();
  expect(page.problems).toEqual([]);
});

it('sends approve through the signal form built from the flow, after a confirmation; the order completes', async () => {
  const page = await signedIn();
  const order = orderCreated({ amount: 250_000 });
  expect((await post(`${stack.url}/webhooks/standard`, order.headers, order.body)).status).toBe(202);
  // The page is rendered once: it shows the wait only when it is loaded after the order is held.
  await eventually('the order is held for review', async () => (await stack.client.workflow.getHandle(order.id).query(statusQuery)).waitingFor !== null);
  await page.goto(eventUrl(order.id));
  await page.getByText('Waiting for').waitFor();
  const form = page.locator('form.signal', { hasText: 'approve' }).first();
  await form.getByLabel('by').fill('ops-lead');
  await form.getByRole('button', { name: 'Send approve…' }).click();
  await page.getByText(`Sends approve to event ${order.id} with {"by":"ops-lead"}`).waitFor();
  await page.getByRole('button', { name: 'Yes, signal' }).click();
  await page.getByText('The signal was sent.').waitFor();
  await expect(stack.client.workflow.getHandle(order.id).result()).resolves.toMatchObject({ outcome: 'charged' });
  await page.reload();
  await expect(page.locator('.facts .status').first().textContent()).resolves.toBe('completed');
});

it("links a keyed flow's event to its key's page, which links the last event applied back", async () => {
  const page = await signedIn();
  const paid = shopifyOrderPaid({ topic: 'orders/paid' });
  expect((await post(`${stack.url}/webhooks/shopify`, paid.headers, paid.body)).status).toBe(202);
  await stack.client.workflow.getHandle(paid.id).result();
  await page.goto(eventUrl(paid.id));
  await page.locator('a.entity', { hasText: String(paid.orderId) }).click();
  await page.getByRole('heading', { name: `Key ${paid.orderId}` }).waitFor();
  await expect(page.locator('.facts').textContent()).resolves.toContain('fulfilShopifyOrder · shopify (latest)');
  await page.locator('.facts a', { hasText: paid.id }).click();
  await page.getByRole('heading', { name: `Event ${paid.id}` }).waitFor();
  expect(page.problems).toEqual([]);
});

it("retries the failed event a key is parked on from the key's page, with a reason; the key goes on", async () => {
  const page = await signedIn();
  const failing = shopifyOrderPaid({ topic: 'orders/paid' });
  stack.resend.failNextWith(422, 'The to address is not valid.');
  expect((await post(`${stack.url}/webhooks/shopify`, failing.headers, failing.body)).status).toBe(202);
  await expect(stack.client.workflow.getHandle(failing.id).result()).rejects.toThrow();
  await page.goto(eventUrl(failing.id));
  await page.locator('a.entity', { hasText: String(failing.orderId) }).click();
  await eventually('the key is parked', async () => {
    await page.reload();
    return (await page.locator('.parked').count()) > 0;
  });
  await page.getByLabel(/^Reason/).fill('the address is fixed');
  await page.getByRole('button', { name: `Retry ${failing.id}` }).click();
  await page.getByText('Retrying: the failed event runs again in its turn.').waitFor();
  await expect(stack.client.workflow.getHandle(failing.id).result()).resolves.toMatchObject({ outcome: 'fulfilled' });
  expect(page.problems).toEqual([]);
});

it('lists a delivery signed with a wrong secret under refused deliveries, with its reason and no body', async () => {
  const page = await signedIn();
  const marker = `refused_marker_${randomUUID()}`;
  const body = JSON.stringify(stripeEvent({ data: { object: { note: marker } } }));
  expect((await post(`${stack.url}/webhooks/stripe`, stripeHeaders(body, 'whsec_rotated_on_one_side_only'), body)).status).toBe(400);
  await eventually('the refusal is kept', async () => {
    await page.goto(`${stack.url}/console/refused?source=stripe`);
    return (await page.locator('table.refusals tbody tr').count()) > 0;
  });
  const row = page.locator('table.refusals tbody tr').first();
  await expect(row.locator('.reason').textContent()).resolves.toBe('invalid-signature');
  await expect(row.textContent()).resolves.toContain('stripe-signature');
  expect(await page.content()).not.toContain(marker);
});

it('groups three failures with one cause; a bulk retry of the group, dry run then confirmed, completes each once', async () => {
  const page = await signedIn();
  const cause = `mailbox_unavailable_${randomUUID().slice(0, 8)}`;
  const deliveries = [checkoutCompleted(), checkoutCompleted(), checkoutCompleted()];
  for (const delivery of deliveries) {
    stack.resend.failNextWith(422, cause);
    expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
    await expect(stack.client.workflow.getHandle(delivery.id).result()).rejects.toThrow();
  }
  await page.goto(`${stack.url}/console/failures`);
  const group = page.locator('table.groups tbody tr', { hasText: 'sendEmail › EmailRejected' });
  await expect(group.locator('td.number').textContent()).resolves.toBe('3');
  await group.getByRole('link', { name: 'sendEmail › EmailRejected' }).click();
  await page.getByRole('button', { name: 'Retry this group: dry run…' }).click();
  await page.getByText('Would retry 3 event(s)').waitFor();
  await page.getByLabel('Reason').fill('the mailbox is back');
  await page.getByRole('button', { name: 'Yes, retry 3 event(s)' }).click();
  await page.locator('.job-state', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
  await expect(page.locator('.job-done').textContent()).resolves.toBe('3');

  for (const delivery of deliveries) {
    await expect(stack.client.workflow.getHandle(delivery.id).result()).resolves.toMatchObject({ outcome: 'fulfilled' });
    expect(stack.resend.emails.filter((email) => email.idempotencyKey === delivery.id)).toHaveLength(1);
    expect(stack.stripe.requests.filter((request) => request.idempotencyKey === delivery.id && !request.replayed)).toHaveLength(1);
  }
  await page.goto(`${stack.url}/console/failures`);
  await expect(page.locator('table.groups tbody tr', { hasText: 'sendEmail › EmailRejected' }).count()).resolves.toBe(0);
});

it('shows an event whose email keeps failing as stuck, in a stuck group, and completed once the email goes through', async () => {
  const page = await signedIn();
  const delivery = checkoutCompleted();
  // Three 500s: attempts at about 0, 1 and 3 s fail, the fourth (about 7 s) sends.
  for (let attempt = 0; attempt < 3; attempt++) stack.resend.failNextWith(500, 'mailbox server overloaded');
  expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  await eventually('the event is stuck', async () => {
    await page.goto(eventUrl(delivery.id));
    return (await page.locator('.facts .status').first().textContent()) === 'stuck';
  });
  await page.goto(`${stack.url}/console/failures`);
  const group = page.locator('table.groups tbody tr', { hasText: delivery.id });
  await expect(group.locator('.status').textContent()).resolves.toBe('stuck');
  await expect(group.textContent()).resolves.toContain('sendEmail › Error');
  await stack.client.workflow.getHandle(delivery.id).result();
  await page.goto(eventUrl(delivery.id));
  await expect(page.locator('.facts .status').first().textContent()).resolves.toBe('completed');
});

it('erases an event: its marker is nowhere on its page afterwards', async () => {
  const page = await signedIn();
  const marker = `erase_marker_${randomUUID().slice(0, 8)}`;
  const delivery = checkoutCompleted({ orderId: marker });
  expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  await stack.client.workflow.getHandle(delivery.id).result();
  await page.goto(eventUrl(delivery.id));
  expect(await page.content()).toContain(marker);

  await page.getByRole('link', { name: 'Erase…' }).click();
  await page.getByText('This cannot be undone').waitFor();
  await page.getByLabel('Reason').fill('GDPR request 42');
  await page.getByRole('button', { name: 'Yes, erase' }).click();
  await page.getByText("The event's personal data was erased.").waitFor();
  expect(await page.content()).not.toContain(marker);
});

it('renders script and markup in an event type and body inert', async () => {
  const page = await signedIn();
  const type = '<script>alert(1)</script>';
  const payload = '"><img src=x onerror=alert(2)>';
  const event = stripeEvent({ type, data: { object: { description: payload } } });
  const body = JSON.stringify(event);
  expect((await post(`${stack.url}/webhooks/stripe`, stripeHeaders(body, SECRETS.stripe), body)).status).toBe(202);
  await stack.client.workflow.getHandle(event.id as string).result();

  await page.goto(`${stack.url}/console/events?source=stripe&type=${encodeURIComponent(type)}`);
  await page.getByText(type).waitFor();
  await page.getByRole('link', { name: event.id as string }).click();
  await page.getByText(payload).first().waitFor();
  await expect(page.locator('img').count()).resolves.toBe(0);
  await expect(page.locator('main script').count()).resolves.toBe(0);
  expect(page.problems).toEqual([]);
});

it('lets a viewer see an event and answers 403 to every action, reveal included', async () => {
  const delivery = checkoutCompleted();
  expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  await stack.client.workflow.getHandle(delivery.id).result();
  const page = await signedIn(VIEWER_TOKEN);
  await page.goto(eventUrl(delivery.id));
  await page.getByRole('heading', { name: 'Delivery' }).waitFor();
  await expect(page.getByRole('heading', { name: 'Actions' }).count()).resolves.toBe(0);
  await expect(page.getByRole('button', { name: /Reveal/ }).count()).resolves.toBe(0);

  const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
  const actions = [...EVENT_ACTIONS.map((action) => action.name), 'reveal'].map((action) => `${eventUrl(delivery.id)}/${action}`);
  const keyActions = ['skip', 'retry'].map((action) => `${stack.url}/console/entities/fulfilShopifyOrder/shopify/1/${action}`);
  for (const url of [...actions, ...keyActions, `${stack.url}/console/failures/0123456789abcdef/retry`]) {
    const response = await page.request.post(url, { form: { _csrf: csrf, reason: 'viewer tries', signal: 'approve' } });
    expect({ url, status: response.status() }).toEqual({ url, status: 403 });
  }
  const confirm = await page.request.get(`${eventUrl(delivery.id)}/confirm/erase`);
  expect(confirm.status()).toBe(403);
});

it('sends one signed alert for a new failure group, not one per failure', async () => {
  const since = alerts.received.length;
  const orders = [orderCreated(), orderCreated()];
  for (const order of orders) {
    stack.resend.failNextWith(422, `alert_cause_${randomUUID().slice(0, 8)}`);
    expect((await post(`${stack.url}/webhooks/standard`, order.headers, order.body)).status).toBe(202);
    await expect(stack.client.workflow.getHandle(order.id).result()).rejects.toThrow();
  }
  type Alert = { type: string; data: { fingerprint: string; source: string; type: string; errorClass: string } };
  const groupAlerts = () =>
    alerts.received
      .slice(since)
      .map((delivery) => JSON.parse(delivery.body) as Alert)
      .filter((alert) => alert.type === 'failure_group.new' && alert.data.source === 'standard');
  await eventually('the alert for the new group arrives', () => groupAlerts().length > 0);
  // The checker has seen the group at its full size, and alerted no more.
  await eventually('the checker saw both failures', async () => (await alertedCount(groupAlerts()[0]!.data.fingerprint)) === 2);
  expect(groupAlerts()).toHaveLength(1);
  expect(groupAlerts()[0]).toMatchObject({ data: { type: 'order.created', errorClass: 'sendEmail › EmailRejected' } });
  // Signed as Standard Webhooks, verified by the library receivers use.
  const delivery = alerts.received.slice(since).find((each) => (JSON.parse(each.body) as Alert).data.source === 'standard')!;
  expect(() => new Webhook(ALERT_SECRET).verify(delivery.body, delivery.headers)).not.toThrow();
});

async function alertedCount(fingerprint: string): Promise<number | undefined> {
  const { rows } = await stack.db.query<{ seen_count: number }>('SELECT seen_count FROM alerted_groups WHERE fingerprint = $1', [fingerprint]);
  return rows[0]?.seen_count;
}
