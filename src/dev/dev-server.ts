import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { temporalCliPath } from '../core/tools';
import { devServerDynamicConfigArgs, splitAddress, stopChild, waitUntilServing } from '../temporal/server-process';

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
  /** The remote codec the Web UI decodes payloads through (the receiver's `/codec`). */
  uiCodecEndpoint?: string;
  /** Dynamic config values (`key=value`) beside the ones `npm run dev` sets. */
  dynamicConfig?: readonly string[];
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
    [
      'server',
      'start-dev',
      '--ip',
      host,
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--db-filename',
      dbFile,
      ...sqlite,
      '--log-level',
      'error',
      '--ui-disable-news-fetch',
      ...devServerDynamicConfigArgs(),
      ...(options.dynamicConfig ?? []).flatMap((value) => ['--dynamic-config-value', value]),
      ...(options.uiCodecEndpoint ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
    ],
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
    await waitUntilServing('The Temporal dev server', options.address, exited, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
