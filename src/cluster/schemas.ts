import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { PostgresRefusedError, PostgresUnreachableError } from '../core/errors';
import { temporalSqlToolPath } from '../core/tools';

/** Temporal's two databases on that server, created with their schemas when missing. */
export const TEMPORAL_DATABASES = { temporal: 'postgresql/v12/temporal', temporal_visibility: 'postgresql/v12/visibility' } as const;

/**
 * Creates `temporal` and `temporal_visibility` with their schemas when missing, and upgrades them
 * to what the pinned server needs (a no-op when they are current). The schemas come from the SQL
 * tool's embedded copies.
 */
export async function ensureSchemas(dbUrl: string): Promise<void> {
  const existing = await existingDatabases(dbUrl);
  const url = new URL(dbUrl);
  const connection = [
    '--plugin',
    'postgres12',
    '--ep',
    url.hostname,
    '--port',
    url.port || '5432',
    '--user',
    decodeURIComponent(url.username),
    '--password',
    decodeURIComponent(url.password),
  ];
  for (const [database, schemaName] of Object.entries(TEMPORAL_DATABASES)) {
    const tool = (...args: string[]) => sqlTool([...connection, '--db', database, ...args]);
    if (!existing.has(database)) {
      await tool('create-database', '--defaultdb', url.pathname.slice(1) || 'postgres');
      await tool('setup-schema', '-v', '0.0');
    }
    await tool('update-schema', '--schema-name', schemaName);
  }
}

async function existingDatabases(dbUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    // An answer from the server carries its SQLSTATE (28P01, 28000, 3D000); a socket's failure a Node code.
    const { code, message } = error as { code?: string; message: string };
    if (code && /^[0-9A-Z]{5}$/.test(code)) throw new PostgresRefusedError(dbUrl, message);
    throw new PostgresUnreachableError(dbUrl, message);
  }
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [Object.keys(TEMPORAL_DATABASES)]);
    return new Set(rows.map((row) => row.datname));
  } finally {
    await client.end();
  }
}

async function sqlTool(args: string[]): Promise<void> {
  try {
    await promisify(execFile)(temporalSqlToolPath(), args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    const command = args.filter((arg, index) => args[index - 1] !== '--password').join(' ');
    throw new Error(`temporal-sql-tool ${command} failed: ${(stderr || stdout || (error as Error).message).trim()}`, { cause: error });
  }
}
