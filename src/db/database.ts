import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Something SQL can run on: the database itself or one open transaction. */
export interface Queryable {
  query<Row extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
}

/** The application database: PostgreSQL through `DATABASE_URL`, or PGlite embedded in this process. */
export interface Database extends Queryable {
  readonly kind: 'postgresql' | 'embedded';
  /** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * PostgreSQL when `url` is set, else PGlite in `embeddedDir`. `exitOnIdle` lets a short-lived
 * process (the CLI) end with the pool open.
 */
export async function openDatabase(options: { url?: string; embeddedDir?: string; exitOnIdle?: boolean }): Promise<Database> {
  if (options.url) return openPostgres(options.url, options.exitOnIdle ?? false);
  if (options.embeddedDir) return openEmbedded(options.embeddedDir);
  throw new Error('openDatabase needs a PostgreSQL URL or a directory for the embedded database.');
}

function openPostgres(url: string, exitOnIdle: boolean): Database {
  const pool = new pg.Pool({ connectionString: url, max: 10, allowExitOnIdle: exitOnIdle });
  // An idle connection dies when PostgreSQL restarts; the pool drops it and the next query opens a
  // new one. Without a listener, that 'error' event would end the process.
  pool.on('error', () => {});
  return {
    kind: 'postgresql',
    query: (sql, params) => pool.query(sql, params),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, params) => client.query(sql, params) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** PGlite keeps its files in one directory and serves only this process (`npm run dev`). */
async function openEmbedded(dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  return {
    kind: 'embedded',
    query: (sql, params) => db.query(sql, params),
    transaction: (work) => db.transaction((tx) => work({ query: (sql, params) => tx.query(sql, params) })),
    close: () => db.close(),
  };
}
