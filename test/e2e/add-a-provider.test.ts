import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { GO_TOOL_BUILD_MS, goTool } from '../support/go-tools';
import { followGuide, runInCopy } from '../support/guides';
import { consoleCommands, type CodeBlock } from '../support/markdown';
import { freePort } from '../support/ports';
import { spawnProcess, type Spawned } from '../support/processes';

/**
 * docs/add-a-provider.md, followed literally on a copy of the project: its kind literal, its
 * provider file, its sample and its line are written as the page shows them, the copy is built,
 * `npm run dev` runs it, and the page's own commands send the sample and list the providers. The
 * sample must start one workflow and be a duplicate the second time; a tampered body is refused.
 */
let blocks: CodeBlock[];
let copy: string;
let dev: Spawned | undefined;
let env: NodeJS.ProcessEnv;
let client: Client;

/** A command as the page writes it, run in the copy. */
const run = (command: string) => runInCopy(command, env, copy);

beforeAll(async () => {
  // The copy's chart test runs the project's Helm (the copy links .tools): built, or waited for, first.
  await goTool('helm');
  // Steps 1 to 3 on a copy of the project. What a new kind touches: the kind literal, the provider's
  // file, its sample and its line.
  let written: string[];
  ({ copy, blocks, written } = followGuide('docs/add-a-provider.md'));
  expect(written).toEqual(['contracts/events.ts', 'src/providers/typeform.ts', 'src/providers/fixtures/typeform.form_response.json', 'src/providers/kinds.ts']);

  // Step 4: build (the type check included), then npm run dev on ports and a data directory of its own.
  const build = spawnProcess('npm', ['run', 'build'], {}, copy);
  expect({ code: await build.exited, output: build.output() }).toMatchObject({ code: 0 });
  env = {
    PORT: String(await freePort()),
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort(1000)}`,
    DATA_DIR: path.join(copy, '.data'),
    DATABASE_URL: '',
    TYPEFORM_WEBHOOK_SECRET: '',
    WEBHOOKS_CONFIG: '',
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
  rmSync(copy, { recursive: true, force: true });
});

it("sends the page's sample: one workflow, the repeat a duplicate; and lists the kind as the page shows it", async () => {
  const [send, providers] = consoleCommands(blocks.find((block) => block.lang === 'console')!) as [
    { command: string; prints: string[] },
    { command: string; prints: string[] },
  ];
  const sent = await run(`${send.command} --json`);
  expect(sent.code).toBe(0);
  const attempts = sent.output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { status: number; body: { status: string; eventId: string } });
  expect(attempts.map((attempt) => [attempt.status, attempt.body.status])).toEqual([
    [202, 'started'],
    [200, 'duplicate'],
  ]);
  expect(await client.workflow.getHandle(attempts[0]!.body.eventId).result()).toMatchObject({ outcome: 'ignored', source: 'typeform', type: 'form_response' });

  const listed = await run(providers.command);
  expect(listed.code).toBe(0);
  expect(listed.output).toContain(providers.prints.filter((line) => line !== '…').join('\n'));
});

it('ships with nothing else changed: in the copy, the tests that hold the chart, compose and the kinds to the declarations pass', async () => {
  // The chart's and compose's tests that would fail on a list of kinds, and the kinds' own.
  const tests = ['test/repository/helm-chart.test.ts', 'test/repository/docker-compose.test.ts', 'test/unit/providers/declarations.test.ts'];
  const only = "names no kind's variable|the declared provider kinds";
  const jest = spawnProcess(
    process.execPath,
    [path.join(copy, 'node_modules/jest/bin/jest.js'), '--maxWorkers=1', '-t', only, ...tests],
    { DATABASE_URL: process.env.DATABASE_URL },
    copy,
  );
  expect({ code: await jest.exited, output: jest.output() }).toMatchObject({ code: 0 });
  expect(jest.output()).toMatch(/Tests: +\d+ skipped, 5 passed/);
}, 120_000);

it('refuses a signed sample whose body was changed after signing, and starts nothing', async () => {
  // The page's provider signs the sample; the test changes one byte of what it signed.
  const { createTypeformAdapter } = (await import(path.join(copy, 'dist/src/providers/typeform.js'))) as {
    createTypeformAdapter: (options: { source: string; secrets: string[] }) => { sign(event: object): { headers: Record<string, string>; body: string } };
  };
  const signed = createTypeformAdapter({ source: 'typeform', secrets: ['typeform-durable-webhooks-development-only'] }).sign({
    id: 'TAMPERED0000000000000000000',
    type: 'form_response',
    payload: { form_response: { form_id: 'lT4Z3j' } },
    timestamp: new Date(),
  });
  const response = await fetch(`http://127.0.0.1:${env.PORT}/webhooks/typeform`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body.replace('lT4Z3j', 'lT4Z3k'),
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ type: 'urn:durable-webhooks:problem:invalid-signature' });
  await expect(client.workflow.getHandle('TAMPERED0000000000000000000').describe()).rejects.toThrow();
});
