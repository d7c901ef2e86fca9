import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { checkoutCompleted, orderCreated } from './events';
import { eventually } from './eventually';
import { ROOT } from './processes';
import { SECRETS, stripeEvent, stripeHeaders } from './signing';
import { post, startStack } from './stack';
import { startScriptServers } from './script-stack';

/** Where docs/console.md finds the pictures. */
export const SCREENSHOTS_DIR = path.join(ROOT, 'docs/console');

/** The pictures docs/console.md shows, in the order of its walk through a bulk day. */
export const SCREENSHOTS = ['overview', 'failures', 'group-dry-run', 'job', 'event', 'events', 'refused'] as const;

const ADMIN_TOKEN = 'screenshots-admin-token-0123456789abcdef0123456789';

/**
 * `npm run screenshots`: a running stack (a Temporal dev server, PostgreSQL, a receiver and a worker
 * with their local Stripe and Resend) on a small bulk day, photographed page by page in Chromium:
 * deliveries, three with an email provider refusing, one signed with a rotated secret, then the
 * failure group retried in bulk. Writes docs/console/*.png.
 */
async function main(): Promise<void> {
  const servers = await startScriptServers('screenshots');
  const { server } = servers;
  const stack = await startStack({ env: { ADMIN_TOKEN, REVIEW_THRESHOLD: '100000', TEMPORAL_UI_URL: server.uiUrl } });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const deliveries = Array.from({ length: 12 }, (_, index) => (index % 3 === 0 ? orderCreated() : checkoutCompleted()));
    for (const delivery of deliveries) await post(`${stack.url}/webhooks/${delivery.path}`, delivery.headers, delivery.body);
    // Done before the email provider starts refusing, so only the three below fail.
    await Promise.all(deliveries.map((delivery) => stack.client.workflow.getHandle(delivery.id).result()));
    const failing = [checkoutCompleted(), checkoutCompleted(), checkoutCompleted()];
    for (const delivery of failing) {
      stack.resend.failNextWith(422, 'The recipient mailbox is unavailable');
      await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body);
      await stack.client.workflow
        .getHandle(delivery.id)
        .result()
        .catch(() => undefined);
    }
    const refused = JSON.stringify(stripeEvent());
    await post(`${stack.url}/webhooks/stripe`, stripeHeaders(refused, `${SECRETS.stripe}_rotated_on_one_side`), refused);

    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${stack.url}/console`);
    await page.getByLabel('Admin or viewer token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    mkdirSync(SCREENSHOTS_DIR, { recursive: true });
    const shoot = (name: (typeof SCREENSHOTS)[number], target: Page) => target.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });

    await eventually('the overview shows the refusal', async () => {
      await page.goto(`${stack.url}/console`);
      return (await page.locator('canvas[data-drawn="true"]').count()) === 1 && (await page.getByText('invalid-signature').count()) > 0;
    });
    await shoot('overview', page);
    await page.goto(`${stack.url}/console/failures`);
    await shoot('failures', page);
    await page.getByRole('link', { name: 'sendEmail › EmailRejected' }).click();
    await page.getByRole('button', { name: 'Retry this group: dry run…' }).click();
    await page.getByLabel('Reason').fill('the mailbox is back');
    await shoot('group-dry-run', page);
    await page.getByRole('button', { name: /Yes, retry/ }).click();
    await page.locator('.job-state', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
    await shoot('job', page);
    await page.goto(`${stack.url}/console/events/${encodeURIComponent(failing[0]!.id)}`);
    await shoot('event', page);
    await page.goto(`${stack.url}/console/events`);
    await shoot('events', page);
    await page.goto(`${stack.url}/console/refused`);
    await shoot('refused', page);
    console.log(`wrote ${SCREENSHOTS.length} screenshots to ${path.relative(ROOT, SCREENSHOTS_DIR)}/`);
  } finally {
    await browser.close();
    await stack.close();
    await servers.stop();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
