import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEVELOPMENT_ADMIN_TOKEN } from '../../src/config';
import { Client, Connection } from '@temporalio/client';
import type { EventProgress } from '../../contracts';
import { endOfLifeWarning } from '../../src/dev/node-support';
import { PROVIDERS } from '../../src/providers/index';
import { isServing } from '../../src/temporal/server-process';
import { passableTempDir } from '../support/dirs';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';
import { codeBlocks, consoleCommands } from '../support/markdown';
import { ROOT, runCli, runShell, spawnTs, type Spawned } from '../support/processes';

/**
 * `npm run dev` as a newcomer runs it (on free ports and a data directory of its own): it starts
 * the Temporal dev server, the worker and the receiver, prints the banner, refuses duplicates sent
 * by `durable-webhooks send`, stops everything on Ctrl-C, and finds its events again after a restart.
 */
const dataDir = passableTempDir('dw-dev-');
let env: NodeJS.ProcessEnv;
let dev: Spawned | undefined;

async function startDev(): Promise<Spawned> {
  const started = spawnTs('src/dev.ts', [], env);
  await started.waitFor('Press Ctrl-C to stop.');
  return started;
}

async function stopDev(): Promise<number | null> {
  const running = dev!;
  dev = undefined;
  running.child.kill('SIGINT');
  return running.exited;
}

beforeAll(async () => {
  const temporalPort = await freePort(1000);
  const port = await freePort();
  env = {
    PORT: String(port),
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    DATA_DIR: dataDir,
    STRIPE_WEBHOOK_SECRET: '',
    GITHUB_WEBHOOK_SECRET: '',
    STANDARD_WEBHOOK_SECRET: '',
    // No downstream configuration: the embedded database, the Stripe stand-in, captured email.
    DATABASE_URL: '',
    STRIPE_SECRET_KEY: '',
    GITHUB_TOKEN: '',
    GITHUB_HOOKS: '',
    PADDLE_API_KEY: '',
    SQUARE_ACCESS_TOKEN: '',
    EMAIL_PROVIDER: '',
    NOTIFY_EMAIL: 'ops@example.com',
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  };
});

afterAll(async () => {
  if (dev) await stopDev();
});

// No --url: send finds the receiver from PORT, as a developer's shell would.
const sendJson = async (args: string[]) => {
  const { code, output } = await runCli(['send', ...args, '--json'], env);
  return {
    code,
    attempts: output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { status: number; body: { status: string; eventId: string } }),
  };
};

describe('npm run dev', () => {
  it('runs Temporal, the worker and the receiver; send --repeat 5 gives one started and four duplicates', async () => {
    dev = await startDev();
    const banner = dev.output();
    expect(banner).toContain(`Receiver     http://localhost:${env.PORT}`);
    // dist/ is built from these sources (npm test builds it first): no webpack at start.
    expect(banner).toContain('workflows: the bundle npm run build wrote, newer than workflows/ and contracts/');
    expect(banner).toContain(`Temporal UI  http://localhost:${Number(env.TEMPORAL_ADDRESS!.split(':')[1]) + 1000}/namespaces/default/workflows`);
    expect(banner).toContain('STRIPE_WEBHOOK_SECRET=whsec_durable_webhooks_development_only');
    expect(banner).toContain(path.join(dataDir, 'temporal.sqlite'));
    expect(banner).toMatch(new RegExp(`Database     embedded PostgreSQL in ${path.join(dataDir, 'postgres')}, on 127\\.0\\.0\\.1:\\d+ \\(the CLI finds it\\)`));
    expect(banner).toMatch(/Stripe {7}local stand-in at http:\/\/127\.0\.0\.1:\d+ \(set STRIPE_SECRET_KEY for Stripe\)/);
    expect(banner).toContain("Reconcile    stripe: set STRIPE_SECRET_KEY to catch up from Stripe's Events API");
    expect(banner).toContain("github: set GITHUB_TOKEN and GITHUB_HOOKS to catch up from GitHub's deliveries");
    expect(banner).toContain("paddle: set PADDLE_API_KEY to catch up from Paddle's events API");
    expect(banner).toContain("square: set SQUARE_ACCESS_TOKEN to catch up from Square's Events API");
    expect(banner).toContain(`Email        captured as .eml files in ${path.join(dataDir, 'mail')}`);
    expect(banner).toContain('Payloads     plaintext in Temporal (set PAYLOAD_ENCRYPTION_KEYS to encrypt them)');
    expect(banner).toContain(`Console      http://localhost:${env.PORT}/console (sign in with ${DEVELOPMENT_ADMIN_TOKEN})`);
    // One line when this Node.js is past its end of life (the machine's Node 20), none on a supported one (CI's Node 24).
    const warning = endOfLifeWarning();
    expect(banner.split('\n').filter((line) => line.includes('reached end of life'))).toEqual(warning ? [expect.stringContaining(warning)] : []);

    const { code, attempts } = await sendJson(['stripe', 'checkout.session.completed', '--repeat', '5', '--id', 'evt_dev_e2e_1']);
    expect(code).toBe(0);
    expect(attempts.map((attempt) => [attempt.status, attempt.body.status])).toEqual([
      [202, 'started'],
      [200, 'duplicate'],
      [200, 'duplicate'],
      [200, 'duplicate'],
      [200, 'duplicate'],
    ]);

    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    const client = new Client({ connection });
    try {
      const handle = client.workflow.getHandle('evt_dev_e2e_1');
      expect(await handle.result()).toMatchObject({ outcome: 'fulfilled', source: 'stripe', type: 'checkout.session.completed' });
      expect(await (await handle.describe()).staticSummary()).toBe('stripe · checkout.session.completed · cs_test_a1b2c3d4e5f6g7h8i9j0 · 42.00 EUR');

      // A thin event (send --thin): the customer fetched from the Stripe stand-in as it is now, and stored once.
      const thin = await sendJson(['stripe', 'customer.updated', '--thin', '--repeat', '2', '--id', 'evt_dev_thin_1']);
      expect(thin.attempts.map((attempt) => [attempt.status, attempt.body.status])).toEqual([
        [202, 'started'],
        [200, 'duplicate'],
      ]);
      expect(await client.workflow.getHandle('evt_dev_thin_1').result()).toMatchObject({ outcome: 'stored', type: 'v1.customer.updated' });

      // The console is on, on the embedded database, with the development token the banner printed.
      const signIn = await fetch(`http://localhost:${env.PORT}/console/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${DEVELOPMENT_ADMIN_TOKEN}`,
      });
      expect(signIn.status).toBe(303);
      const events = await fetch(`http://localhost:${env.PORT}/console/events?source=stripe`, {
        headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0]! },
      });
      expect(await events.text()).toMatch(/evt_dev_e2e_1<\/a>.*completed/s);

      const confirmation = readFileSync(path.join(dataDir, 'mail', 'evt_dev_e2e_1.eml'), 'utf8');
      expect(confirmation).toContain('To: ada@example.com');
      expect(confirmation).toContain('Message-ID: <evt_dev_e2e_1@durable-webhooks>');
      expect(confirmation).toContain('Subject: Order ord_1001 confirmed');

      for (const [source, type, outcome] of [
        ['github', 'issues.opened', 'notified'],
        ['standard', 'order.created', 'charged'],
      ]) {
        const sent = await sendJson([source!, type!, '--repeat', '2']);
        expect(sent.attempts.map((attempt) => attempt.body.status)).toEqual(['started', 'duplicate']);
        expect(await client.workflow.getHandle(sent.attempts[0]!.body.eventId).result()).toMatchObject({ outcome });
      }
      // Another GitHub sample is another event, not a replay of the first one's body.
      const again = await sendJson(['github', 'issues.opened']);
      expect(again.attempts.map((attempt) => attempt.body.status)).toEqual(['started']);
      expect(await client.workflow.getHandle(again.attempts[0]!.body.eventId).result()).toMatchObject({ outcome: 'notified' });
      expect(readdirSync(path.join(dataDir, 'mail'))).toHaveLength(4);
    } finally {
      await connection.close();
    }
    // The first start on a new machine compiles every source through tsx and initialises the embedded
    // database with empty caches, while `.ci/run` builds the Go tools beside it: 60 s was not enough.
  }, 180_000);

  it('takes a declined order through the CLI: it waits for retryPayment, and the retry charges it once and sends the receipt', async () => {
    dev ??= await startDev();
    const sample = path.join(dataDir, 'declined-order.json');
    writeFileSync(
      sample,
      JSON.stringify({
        type: 'order.created',
        payload: {
          orderId: 'ord_declined',
          amount: 4200,
          currency: 'eur',
          customer: 'cus_T3stCustomer01',
          paymentMethod: 'pm_card_chargeDeclined',
          email: 'ada@example.com',
        },
      }),
    );
    const { attempts } = await sendJson(['standard', sample]);
    const eventId = attempts[0]!.body.eventId;
    const status = async () => JSON.parse((await runCli(['events', 'query', eventId, 'status', '--json'], env)).output) as EventProgress;
    await eventually('the order waits for retryPayment', async () => (await status()).awaiting !== null);
    expect((await runCli(['events', 'show', eventId], env)).output).toMatch(
      /Waiting {4}retryPayment signal with the customer's new payment method, for charge attempt 2, until \d{4}-/,
    );

    expect(await runCli(['events', 'signal', eventId, 'retryPayment', '--data', '{"paymentMethod":"pm_card_visa"}'], env)).toMatchObject({
      code: 0,
      output: `Sent retryPayment to ${eventId}.\n`,
    });
    await eventually('the order is charged', async () => (await status()).outcome === 'charged');
    const mail = (step: string) => readFileSync(path.join(dataDir, 'mail', `${eventId}_${step}.eml`), 'utf8');
    expect(mail('email_payment-failed_1')).toContain('Subject: Payment for order ord_declined failed');
    expect(mail('email_receipt')).toContain('Subject: Receipt for order ord_declined');
  });

  it('sends a signed sample of every provider kind with send: each recorded once, the repeat a duplicate', async () => {
    dev ??= await startDev();
    // Every sample every declared kind has, as `send --help` lists them.
    const samples = PROVIDERS.flatMap(({ builtIn, samples }) => (builtIn ? Object.keys(samples).map((type) => [builtIn.name, type]) : []));
    expect(samples.length).toBeGreaterThanOrEqual(12);
    for (const [source, type] of samples) {
      const { code, attempts } = await sendJson([source!, type!, '--repeat', '2']);
      expect({ source, code, statuses: attempts.map((attempt) => attempt.status) }).toEqual({ source, code: 0, statuses: [202, 200] });
    }
  });

  it("runs every durable-webhooks command of the docs' console blocks, as written, with nothing configured", async () => {
    dev ??= await startDev();
    // The guides' commands need the flow or provider they add: test/e2e/add-a-flow.test.ts and add-a-provider.test.ts run them.
    const guides = ['add-a-flow.md', 'add-a-provider.md'];
    const pages = [
      'README.md',
      ...readdirSync(path.join(ROOT, 'docs'))
        .filter((file) => file.endsWith('.md') && !guides.includes(file))
        .map((file) => `docs/${file}`),
    ];
    const commands = pages.flatMap((page) =>
      codeBlocks(readFileSync(path.join(ROOT, page), 'utf8'))
        // A block for a configuration of its own (```console config=…) is run by its page's test, under that configuration.
        .filter((block) => block.lang === 'console' && block.attributes.config === undefined)
        .flatMap(consoleCommands)
        // The rest set a provider's credentials first (a live key, a GitHub token): their APIs are not reachable here.
        .filter(({ command }) => command.startsWith('npx durable-webhooks '))
        .map(({ command }) => ({ page, command })),
    );
    expect(commands.length).toBeGreaterThanOrEqual(8);
    // About twenty commands and the polls between them, a node process each, on a machine the rest of the suite keeps busy: more than the default minute.

    // Each command runs literally through a shell, in a folder of the project as a user's shell would
    // be: npx runs the build's bin, so a bin that lost its execute bit fails here as it fails for users.
    mkdirSync(path.join(ROOT, '.data'), { recursive: true });
    const cwd = mkdtempSync(path.join(ROOT, '.data', 'docs-'));
    // The first runs through npx as written; the rest run the bin npx runs (the same file, the same
    // execute bit) without npx's own second or so per command, of which there are dozens with the polls.
    const { bin } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const binPath = path.join(ROOT, bin['durable-webhooks']!);
    let viaNpx = true;
    const cli = (command: string) => {
      const line = viaNpx ? command : command.replaceAll('npx durable-webhooks ', `${binPath} `);
      viaNpx = false;
      return runShell(line, env, cwd);
    };
    // docs/flows.md's declined order, made by running its sh block; the docs' msg_… is that order.
    const declinedBlock = codeBlocks(readFileSync(path.join(ROOT, 'docs/flows.md'), 'utf8')).find(
      (block) => block.lang === 'sh' && block.text.includes('declined.json'),
    )!;
    const declinedOrder = async () => {
      const declined = await cli(`${declinedBlock.text.trim()} --json`);
      expect({ code: declined.code, error: declined.error }).toEqual({ code: 0, error: undefined });
      const id = (JSON.parse(declined.output) as { body: { eventId: string } }).body.eventId;
      await eventually(
        'the declined order waits for retryPayment',
        async () => JSON.parse((await cli(`npx durable-webhooks events query ${id} status --json`)).output).awaiting !== null,
      );
      return id;
    };
    let order = await declinedOrder();

    let checkout: string | undefined;
    for (const { page, command } of commands) {
      // Each page that signals retryPayment gets an order of its own still waiting for it.
      if (command.includes(' retryPayment ')) order = await declinedOrder();
      const literal = command.replace(/\bmsg_\S*/g, order).replace(/\bevt_\S*/g, () => checkout!);
      const result = await cli(literal);
      expect({ page, command: literal, code: result.code, error: result.error }).toEqual({ page, command: literal, code: 0, error: undefined });
      // The README's first send makes the Stripe event the docs' evt_… stand for; later commands address it once it has finished.
      checkout ??= /started +(evt_\S+)/.exec(result.output)?.[1];
      if (checkout && (command.includes(' send ') || command.includes(' reset '))) {
        await eventually(
          'the checkout finished',
          async () => (JSON.parse((await cli(`npx durable-webhooks events show ${checkout} --json`)).output) as { status: string }).status === 'completed',
        );
      }
    }
    expect(checkout).toBeDefined();
  }, 180_000);

  it('stops the dev server, worker and receiver on Ctrl-C', async () => {
    expect(await stopDev()).toBe(0);
    expect(await isServing(env.TEMPORAL_ADDRESS!)).toBe(false);
    await expect(fetch(`http://localhost:${env.PORT}/healthz`)).rejects.toThrow();
  });

  it('keeps accepted events across a restart: the same event is still a duplicate', async () => {
    dev = await startDev();
    const { attempts } = await sendJson(['stripe', 'checkout.session.completed', '--id', 'evt_dev_e2e_1']);
    expect(attempts).toEqual([{ status: 200, body: { status: 'duplicate', eventId: 'evt_dev_e2e_1', workflowId: 'evt_dev_e2e_1', state: 'completed' } }]);
  });
});

describe('npm run dev with PAYLOAD_ENCRYPTION_KEYS and ADMIN_TOKEN', () => {
  it("encrypts payloads in Temporal and points the dev server's UI at the receiver's codec endpoint", async () => {
    const temporalPort = await freePort(1000);
    const port = await freePort();
    const encrypted = spawnTs('src/dev.ts', [], {
      ...env,
      PORT: String(port),
      TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
      DATA_DIR: passableTempDir('dw-dev-encrypted-'),
      PAYLOAD_ENCRYPTION_KEYS: `dev:${randomBytes(32).toString('base64')}`,
      ADMIN_TOKEN: 'dev-admin-token-0123456789abcdef0123456789',
      WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    });
    try {
      await encrypted.waitFor('Press Ctrl-C to stop.');
      expect(encrypted.output()).toContain(`Payloads     encrypted in Temporal; codec endpoint http://localhost:${port}/codec (Bearer $ADMIN_TOKEN)`);
      const settings = (await (await fetch(`http://localhost:${temporalPort + 1000}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
      expect(settings.Codec?.Endpoint).toBe(`http://localhost:${port}/codec`);
    } finally {
      encrypted.child.kill('SIGINT');
      expect(await encrypted.exited).toBe(0);
    }
  });
});

describe('durable-webhooks send', () => {
  it('explains an unknown source and exits 1', async () => {
    const { code, error } = await runCli(['send', 'intercom', 'conversation.user.created'], env);
    expect(code).toBe(1);
    // The diagnostic is a JSON line on stderr, as every process logs (a readable one on a terminal).
    expect(error).toBe(
      'No source named "intercom"; configured: stripe, github, standard, svix, shopify, paddle, square, slack, linear, twilio, sendgrid, adyen.',
    );
  });
});
