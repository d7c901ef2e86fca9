import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { temporalCliPath } from './temporal-cli';

export interface DevServer {
  address: string;
  uiUrl: string;
  dbFile: string;
  /** Stops the server and waits for it to exit. */
  stop(): Promise<void>;
}

export interface DevServerOptions {
  /** `host:port` for gRPC; the Web UI listens on port + 1000, as the CLI does. */
  address: string;
  /** Directory for the SQLite file, so events survive a restart. */
  dataDir: string;
  /** Where the server's own log goes. @default 'inherit' */
  stdio?: 'inherit' | 'ignore';
  /** @default 60_000 */
  startTimeoutMs?: number;
}

/** `temporal server start-dev` with SQLite persistence and the Web UI, ready when this resolves. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const { host, port } = splitAddress(options.address);
  const uiPort = port + 1000;
  mkdirSync(options.dataDir, { recursive: true });
  const dbFile = path.join(options.dataDir, 'temporal.sqlite');
  // WAL with full sync: every acknowledged write is on disk, and concurrent starts stop queueing on
  // the rollback journal (about twice the new-event throughput in `npm run bench`).
  const sqlite = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full'];
  const child = spawn(
    temporalCliPath(),
    ['server', 'start-dev', '--ip', host, '--port', String(port), '--ui-port', String(uiPort), '--db-filename', dbFile, ...sqlite, '--log-level', 'error', '--ui-disable-news-fetch'],
    { stdio: ['ignore', options.stdio ?? 'inherit', options.stdio ?? 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const server: DevServer = {
    address: options.address,
    uiUrl: `http://${host === '127.0.0.1' ? 'localhost' : host}:${uiPort}`,
    dbFile,
    stop: () => stopChild(child, exited),
  };
  try {
    await waitUntilServing(options.address, exited, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/** True when a Temporal frontend answers at the address within a second. */
export async function isServing(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1_000 });
    try {
      await connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.getSystemInfo({}));
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

async function waitUntilServing(address: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`The Temporal dev server exited with code ${exitCode} before it was ready (is ${address} in use?).`);
    if (await isServing(address)) return;
    await delay(250);
  }
  throw new Error(`The Temporal dev server did not answer at ${address} within ${timeoutMs / 1000} s.`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function splitAddress(address: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match) throw new Error(`TEMPORAL_ADDRESS must be host:port, not "${address}".`);
  return { host: match[1]!, port: Number(match[2]) };
}

export function isLoopback(address: string): boolean {
  const { host } = splitAddress(address);
  return host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');
}
