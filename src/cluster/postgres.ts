import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface LocalPostgres {
  /** `postgres://<user>:<password>@127.0.0.1:<port>/postgres`: a random password (SCRAM), on loopback only. */
  url: string;
  /** Its folder: the data, the socket and the password, its server user's alone. */
  dir: string;
  /** Stops the server (fast shutdown: open connections are cut, as in a real restart). */
  stop(): void;
  /** Starts it again on the same port and data directory. */
  start(): void;
  /** Stops the server and deletes its folder: a throwaway cluster's end (tests, the bench), which leaves nothing behind. */
  remove(): void;
}

export interface LocalPostgresOptions {
  port: number;
  /** The superuser initdb creates. */
  user: string;
  /** Keeps the cluster here across runs; a temporary directory otherwise. */
  dir?: string;
}

/**
 * A PostgreSQL cluster of our own from the installed server binaries (Debian's
 * /usr/lib/postgresql/<version>/bin, or initdb on PATH): `npm test` without DATABASE_URL, the
 * production tests (which restart it), and `npm run cluster` when no PostgreSQL answers. Its folder
 * (the socket's too) is its server user's alone (0700), and every connection, local or TCP, needs
 * the random password kept in `<dir>/password` (0600): no other user of the machine gets in. As
 * root, the server runs as `postgres`, which initdb requires, and owns the folder.
 */
export function startLocalPostgres({ port, user, dir }: LocalPostgresOptions): LocalPostgres {
  const bin = postgresBin();
  const home = dir ?? mkdtempSync(path.join(tmpdir(), 'dw-postgres-'));
  mkdirSync(home, { recursive: true });
  chmodSync(home, 0o700);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres:postgres', home]);
  const dataDir = path.join(home, 'data');
  const passwordFile = path.join(home, 'password');
  const run = (tool: string, args: string[]) => {
    const command = path.join(bin, tool);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  };
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    if (asRoot) execFileSync('chown', ['postgres:postgres', passwordFile]);
    run('initdb', ['-D', dataDir, '-U', user, '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '--no-sync']);
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  const start = () =>
    run('pg_ctl', [
      '-D',
      dataDir,
      '-w',
      '-l',
      path.join(home, 'postgres.log'),
      '-o',
      `-p ${port} -k ${home} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`,
      'start',
    ]);
  start();
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  return {
    url: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    dir: home,
    stop,
    start,
    remove() {
      stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** True when PostgreSQL's server binaries are installed here. */
export function hasPostgresBinaries(): boolean {
  try {
    postgresBin();
    return true;
  } catch {
    return false;
  }
}

function postgresBin(): string {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const newest = readdirSync(debian).sort((a, b) => Number(b) - Number(a))[0];
    if (newest && existsSync(path.join(debian, newest, 'bin', 'initdb'))) return path.join(debian, newest, 'bin');
  }
  try {
    return path.dirname(execFileSync('which', ['initdb'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error('PostgreSQL is not installed: apt-get install postgresql (npm test does it as root), or set DATABASE_URL.');
  }
}
