import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import pino from 'pino';
import { silentLogger, type Logger } from '../../src/core/logger';
import { installRuntimeServingMetrics } from '../../src/temporal/runtime';
import { ROOT } from '../support/processes';

/**
 * A worker's metrics port (WORKER_METRICS_ADDRESS): docs/production.md starts two workers on one host
 * at the same moment, on the same default address. The one that finds the port taken, however late
 * (after any check, as its runtime binds), serves its metrics on the next port and runs on.
 */
const held = new Error('Failed to start prometheus metrics exporter: Address already in use (os error 98)');

/** A logger that keeps each line's message. */
const recordingLogger = (messages: string[]): Logger => pino({}, { write: (line: string) => void messages.push((JSON.parse(line) as { msg: string }).msg) });

it("takes the next port when the runtime's own bind finds the port taken, and says so", async () => {
  const installs: Array<string | undefined> = [];
  const warnings: string[] = [];
  const install = (_logger: Logger, { metricsAddress }: { metricsAddress?: string } = {}) => {
    installs.push(metricsAddress);
    if (metricsAddress === '127.0.0.1:9464') throw held;
  };
  expect(await installRuntimeServingMetrics(recordingLogger(warnings), '127.0.0.1:9464', install)).toBe('127.0.0.1:9465');
  expect(installs).toEqual(['127.0.0.1:9464', '127.0.0.1:9465']);
  expect(warnings).toEqual(['metrics port 9464 is busy; serving metrics on 9465']);
});

it('runs without metrics when none is asked, or every port is taken; any other failure stops the worker', async () => {
  const installs: Array<string | undefined> = [];
  const install = (_logger: Logger, { metricsAddress }: { metricsAddress?: string } = {}) => {
    installs.push(metricsAddress);
    if (metricsAddress) throw held;
  };
  expect(await installRuntimeServingMetrics(silentLogger, undefined, install)).toBeUndefined();
  expect(await installRuntimeServingMetrics(silentLogger, '[::1]:9464', install)).toBeUndefined();
  expect(installs).toEqual([undefined, ...Array.from({ length: 11 }, (_, index) => `[::1]:${9464 + index}`), undefined]);
  const refused = () => {
    throw new Error('Failed to start prometheus metrics exporter: Permission denied (os error 13)');
  };
  await expect(installRuntimeServingMetrics(silentLogger, '127.0.0.1:80', refused)).rejects.toThrow('Permission denied');
});

it("recognises the Temporal runtime's own failure to bind a taken port (the production build, in a process of its own)", async () => {
  const busy = createServer();
  const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
  try {
    const script = `
      const { installRuntimeServingMetrics } = require('./dist/src/temporal/runtime.js');
      const { silentLogger } = require('./dist/src/core/logger.js');
      installRuntimeServingMetrics(silentLogger, '127.0.0.1:${port}').then(async (served) => {
        const answer = await fetch('http://' + served + '/metrics');
        console.log(JSON.stringify({ served, status: answer.status }));
        process.exit(0);
      });`;
    const { served, status } = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as {
      served: string;
      status: number;
    };
    expect(served).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(Number(served.split(':')[1])).toBeGreaterThan(port);
    expect(status).toBe(200);
  } finally {
    busy.close();
  }
});
