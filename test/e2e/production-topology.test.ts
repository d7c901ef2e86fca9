import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/eventually';
import { ROOT } from '../support/processes';
import { SECRETS_ENV } from '../support/signing';
import { startStack, type WorkerStack } from '../support/stack';

/**
 * The production section's processes, run as docs/production.md writes them (two workers and two
 * receivers on one host, every one on its default metrics address): all four start, and each
 * serves its metrics on a port of its own. The block's `export` line is the only one not run: its
 * values are placeholders, and this stack supplies them.
 */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ worker: 'external' });
});
afterAll(() => stack.close());

function processLines(): string {
  const doc = readFileSync(path.join(ROOT, 'docs/production.md'), 'utf8');
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes('npm run worker &'))!;
  return block
    .split('\n')
    .filter((line) => /^(PORT=\d+ )?npm run (worker|receiver)/.test(line))
    .join('\n');
}

it('runs the documented two workers and two receivers on one host, each with its own metrics port', async () => {
  const lines = processLines();
  expect(lines).toBe('npm run worker & npm run worker &\nPORT=3000 npm run receiver & PORT=3001 npm run receiver &');
  const env = { ...process.env, ...stack.workerEnv, ...SECRETS_ENV, WORKER_METRICS_ADDRESS: undefined, NODE_ENV: undefined };
  const shell = spawn('bash', ['-c', `${lines}\nwait`], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  shell.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = (message: string) =>
    output
      .split('\n')
      .filter((line) => line.includes(`"message":"${message}"`))
      .map((line) => JSON.parse(line) as { metrics: string });
  try {
    // A process that stopped says why in its last lines: CI shows a run's output, not its files.
    await eventually(
      'both workers poll and both receivers listen',
      () => started('worker polling').length === 2 && started('receiver listening').length === 2,
      { timeoutMs: 60_000 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; their last lines:\n${output.split('\n').slice(-30).join('\n')}`);
    });
    expect(output).not.toContain('stopped:');
    const metrics = [...started('worker polling'), ...started('receiver listening')].map((line) => line.metrics);
    expect(new Set(metrics).size).toBe(4);
    for (const url of metrics) expect((await fetch(url)).status).toBe(200);
    for (const port of [3000, 3001]) expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  } finally {
    process.kill(-shell.pid!, 'SIGTERM');
    await new Promise((resolve) => shell.once('exit', resolve));
  }
}, 90_000);
