import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { statusQuery } from '../../contracts';
import { eventually } from '../support/eventually';
import { GO_TOOL_BUILD_MS } from '../support/go-tools';
import { startMailpit } from '../support/mailpit';
import { followGuide, runInCopy } from '../support/guides';
import { consoleCommands, type CodeBlock } from '../support/markdown';
import { freePort } from '../support/ports';
import { ROOT, spawnProcess, type Spawned } from '../support/processes';

/**
 * docs/add-a-flow.md, followed literally on a copy of the project: its files and its one line are
 * written as the page shows them, the copy is built, `npm run dev` runs it, and the page's own
 * commands send the event, list the flow and signal it. The flow must run once, send one email,
 * refuse the input its check refuses, and show the summary the page promises.
 */
const GUIDE = readFileSync(path.join(ROOT, 'docs/add-a-flow.md'), 'utf8');
let blocks: CodeBlock[];
let copy: string;
let mailpit: Awaited<ReturnType<typeof startMailpit>>;
let dev: Spawned | undefined;
let env: NodeJS.ProcessEnv;
let client: Client;

/** A command as the page writes it, run in the copy. */
const run = (command: string) => runInCopy(command, env, copy);

beforeAll(async () => {
  // Steps 1, 2 and 4: every file the page shows, and the line it adds, on a copy of the project.
  let written: string[];
  ({ copy, blocks, written } = followGuide('docs/add-a-flow.md'));
  expect(written).toEqual(['workflows/dunning.ts', 'workflows/index.ts', 'invoice.json']);

  // Step 3: build (the type check included), then npm run dev on ports and a data directory of its own.
  const build = spawnProcess('npm', ['run', 'build'], {}, copy);
  expect({ code: await build.exited, output: build.output() }).toMatchObject({ code: 0 });
  mailpit = await startMailpit();
  const temporalPort = await freePort(1000);
  env = {
    PORT: String(await freePort()),
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    DATA_DIR: path.join(copy, '.data'),
    DATABASE_URL: '',
    STRIPE_WEBHOOK_SECRET: '',
    STRIPE_SECRET_KEY: '',
    WEBHOOKS_CONFIG: '',
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: mailpit.smtpUrl,
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  };
  dev = spawnProcess(process.execPath, ['--import', 'tsx', 'src/dev.ts'], env, copy);
  await dev.waitFor('Press Ctrl-C to stop.');
  client = new Client({ connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS }) });
}, 240_000 + GO_TOOL_BUILD_MS);

afterAll(async () => {
  await client?.connection.close();
  if (dev) {
    dev.child.kill('SIGINT');
    await dev.exited;
  }
  await mailpit?.stop();
  rmSync(copy, { recursive: true, force: true });
});

it('lists the new flow as the page shows it', async () => {
  const listing = blocks.find((block) => block.lang === 'console' && block.text.includes('durable-webhooks flows'))!;
  const [{ command, prints }] = consoleCommands(listing) as [{ command: string; prints: string[] }];
  const { code, output } = await run(command);
  expect(code).toBe(0);
  const shown = prints.filter((line) => line !== '…');
  expect(output).toContain(shown.join('\n'));
});

it('runs the flow once for the sent event, refuses what the signal check refuses, and sends one email', async () => {
  const sendLine = blocks.find((block) => block.lang === 'sh' && block.text.includes('durable-webhooks send'))!.text.trim();
  const sent = await run(`${sendLine} --json`);
  expect(sent.code).toBe(0);
  const attempts = sent.output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { status: number; body: { status: string; eventId: string } });
  expect(attempts.map((attempt) => [attempt.status, attempt.body.status])).toEqual([
    [202, 'started'],
    [200, 'duplicate'],
  ]);
  const eventId = attempts[0]!.body.eventId;
  const handle = client.workflow.getHandle(eventId);
  const description = await handle.describe();
  expect(description.type).toBe('dunning');
  const summary = await description.staticSummary();
  expect(GUIDE).toContain(`summarised \`${summary}\``);
  expect(summary).toBe('stripe · invoice.payment_failed · in_1QdunningGuide · 42.00 EUR');
  await eventually('the flow waits for approveReminder', async () => (await handle.query(statusQuery)).awaiting?.signals.includes('approveReminder') === true);

  // Step 5, command by command: what the page says each prints, on stdout or as the CLI's error.
  const approval = blocks.find((block) => block.lang === 'console' && block.text.includes('events signal'))!;
  for (const { command, prints } of consoleCommands(approval)) {
    const result = await run(command.replaceAll('<eventId>', eventId));
    expect(result.code === 0 ? result.output.trim() : result.error).toBe(prints.join('\n').replaceAll('<eventId>', eventId));
  }
  expect(await handle.result()).toMatchObject({ outcome: 'reminded' });

  // Redelivered after it finished: a duplicate, and still one email.
  expect((await run(`${sendLine.replace('--repeat 2', '')} --id ${eventId} --json`)).output).toContain('"duplicate"');
  const messages = await mailpit.messages();
  expect(
    messages.filter((message) => message.Subject === 'Payment for invoice in_1QdunningGuide failed').map((message) => message.To.map((to) => to.Address)),
  ).toEqual([['ada@example.com']]);
  const history = Buffer.from(temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish()).toString();
  expect(history).not.toContain('ada@example.com');
  expect(history).not.toContain('invoice.stripe.com');
});
