import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { prepareNamespace } from '../../src/temporal/namespace';
import { checkoutCompleted } from '../support/events';
import { ROOT } from '../support/processes';
import { freePort } from '../support/ports';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * A real browser (Debian's Chromium, driven by playwright-core) on the dev server's Web UI: an
 * operator finds an event by its ID and sees our search attributes and summary, and its payloads,
 * encrypted in Temporal, decoded through the receiver's codec endpoint. The screenshots are kept
 * in test-results/ as artifacts.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-results');
const CODEC_TOKEN = 'codec-token-for-the-ui-test-0123456789abcdef0123456789';
let devServer: DevServer;
let stack: WorkerStack;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH.`);
  const port = await freePort(1000);
  const receiverPort = await freePort();
  devServer = await startDevServer({
    address: `127.0.0.1:${port}`,
    dataDir: mkdtempSync(path.join(tmpdir(), 'dw-ui-')),
    stdio: 'ignore',
    uiCodecEndpoint: `http://localhost:${receiverPort}/codec`,
  });
  const connection = await Connection.connect({ address: devServer.address });
  await prepareNamespace(connection, 'default');
  await connection.close();
  stack = await startStack({
    address: devServer.address,
    env: {
      PORT: String(receiverPort),
      PAYLOAD_ENCRYPTION_KEYS: `ui-test:${randomBytes(32).toString('base64')}`,
      CODEC_TOKEN,
      TEMPORAL_UI_URL: devServer.uiUrl,
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
  mkdirSync(ARTIFACTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await devServer?.stop();
});

/**
 * A page whose requests to the codec endpoint carry the admin token, as the authenticating proxy in
 * front of the endpoint adds it for operators (the UI sends no token of its own without SSO).
 */
async function operatorPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.route(`${stack.url}/codec/**`, (route) => route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${CODEC_TOKEN}` } }));
  return page;
}

it('finds an event by its ID in the Web UI and shows WebhookSource, WebhookEventType and the summary', async () => {
  const delivery = checkoutCompleted();
  expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  await stack.client.workflow.getHandle(delivery.id).result();

  const page = await operatorPage();
  const query = encodeURIComponent(`WorkflowId = "${delivery.id}"`);
  await page.goto(`${devServer.uiUrl}/namespaces/default/workflows?query=${query}`);
  await page.getByRole('link', { name: delivery.id }).first().click();
  await page.getByRole('heading', { name: delivery.id }).waitFor();

  await page.getByText('Search Attributes', { exact: true }).click();
  await page.getByText('"WebhookSource": "stripe"').waitFor();
  await page.getByText('"WebhookEventType": "checkout.session.completed"').waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'temporal-ui-search-attributes.png'), fullPage: true });

  await page.getByText('User Metadata', { exact: true }).click();
  const session = (JSON.parse(delivery.body) as { data: { object: { id: string } } }).data.object.id;
  // The UI renders user metadata as markdown inside a sandboxed iframe.
  await page.frameLocator('#user-metadata-summary').getByText(`stripe · checkout.session.completed · ${session} · 42.00 EUR`).waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'temporal-ui-summary.png'), fullPage: true });
  await page.close();
});

it("shows an event's input, encrypted in Temporal, decoded through the receiver's codec endpoint", async () => {
  const marker = `ord_ui_marker_${randomBytes(6).toString('hex')}`;
  const delivery = checkoutCompleted({ orderId: marker });
  expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
  await stack.client.workflow.getHandle(delivery.id).result();

  const page = await operatorPage();
  await page.goto(`${devServer.uiUrl}/namespaces/default/workflows/${encodeURIComponent(delivery.id)}`);
  await page.getByText(marker).first().waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'temporal-ui-decoded-input.png'), fullPage: true });
  await page.close();
});
