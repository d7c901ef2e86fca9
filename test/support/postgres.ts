import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL cluster of the test run's own, for `npm test` without DATABASE_URL: initdb into a
 * temporary directory and pg_ctl on a free port, from the installed server binaries (Debian's
 * /usr/lib/postgresql/<version>/bin, or initdb on PATH). As root, the server runs as `postgres`,
 * which initdb requires.
 */
export function startThrowawayPostgres(port: number): { url: string; stop(): void } {
  const bin = postgresBin();
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-postgres-'));
  chmodSync(dir, 0o777);
  const dataDir = path.join(dir, 'data');
  const run = (tool: string, args: string[]) => {
    const command = path.join(bin, tool);
    if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  };
  run('initdb', ['-D', dataDir, '-U', 'webhooks', '--auth=trust', '--no-sync']);
  run('pg_ctl', ['-D', dataDir, '-w', '-l', path.join(dir, 'postgres.log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  return {
    url: `postgres://webhooks@127.0.0.1:${port}/postgres`,
    stop: () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']),
  };
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
