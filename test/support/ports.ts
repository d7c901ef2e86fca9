import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Where `freePort` draws from: below Linux's ephemeral range (32768 and up), from which every
 * outgoing connection of a busy run takes its local port and could take a probed port before its
 * server binds it; and below 20000, where the production topology's clusters draw theirs.
 */
const FREE_PORTS = { low: 10_000, high: 20_000 };

/**
 * Where a handed-out port is claimed, one file per port, for every test process on the machine (the
 * jest workers, and the test runs that the guides' tests start in copies): a port is free between
 * its probe and its server's bind, seconds later for a dev server, and another process's probe in
 * that window found it free too. A claim lapses after `CLAIM_MS`, longer than any test file runs.
 */
const CLAIMS = path.join(tmpdir(), 'durable-webhooks-test-ports');
const CLAIM_MS = 20 * 60_000;

/** A port nothing listens on now, nor on the ports at each of `offsets` from it (a server's other ports). */
export function freePort(...offsets: number[]): Promise<number> {
  return freePortIn(FREE_PORTS.low, FREE_PORTS.high - Math.max(0, ...offsets), ...offsets);
}

/** A free port in [low, high) whose ports at `offsets` are free too, for servers that cannot use the ephemeral range. */
export async function freePortIn(low: number, high: number, ...offsets: number[]): Promise<number> {
  mkdirSync(CLAIMS, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const ports = [0, ...offsets].map((offset) => port + offset);
    if (!ports.every(claim)) continue;
    const free = await Promise.all(
      ports.map((candidate) =>
        listenOnce(candidate).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (free.every(Boolean)) return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

/** Claims `port` for this process unless another claimed it less than `CLAIM_MS` ago. */
function claim(port: number): boolean {
  const file = path.join(CLAIMS, String(port));
  try {
    if (Date.now() - statSync(file).mtimeMs < CLAIM_MS) return false;
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
