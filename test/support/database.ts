import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database, type Statement } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';

/** The text of what a test's wrapped database is asked to run, prepared or not. */
export const sqlOf = (sql: string | Statement): string => (typeof sql === 'string' ? sql : sql.text);

/**
 * A fresh PostgreSQL database for one test file, on the server DATABASE_URL names (.ci/run starts
 * one and sets it; without it, the global setup starts a throwaway cluster), or on `serverUrl`'s.
 * Dropped by `drop()`.
 */
export async function createTestDatabase(options: { icuLocale?: string; serverUrl?: string } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = options.serverUrl ?? process.env.DATABASE_URL;
  if (!adminUrl) {
    throw new Error(
      'These tests need PostgreSQL: set DATABASE_URL to a server where the user may create databases and holds pg_signal_backend (to drop them while autovacuum is in one), e.g. postgres://webhooks:webhooks@127.0.0.1:5432/webhooks (.ci/run installs and starts one).',
    );
  }
  const name = `dw_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // An ICU locale gives the database a language collation (case-insensitive first, punctuation before
  // letters), as many production databases have, without any OS locale installed.
  await admin.query(
    options.icuLocale
      ? `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale}' LOCALE 'C.UTF-8'`
      : `CREATE DATABASE ${name}`,
  );
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A fresh, migrated database for one test file; `drop()` closes and drops it. */
export type TestDatabase = Database & { readonly url: string; drop(): Promise<void> };

export async function openTestDatabase(options: { icuLocale?: string } = {}): Promise<TestDatabase> {
  const database = await createTestDatabase(options);
  const db = await openDatabase({ url: database.url });
  await migrate(db);
  return {
    ...db,
    url: database.url,
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/** A database no request reaches: for receivers whose tests never get that far (their refusals come first). */
export const UNREACHABLE_DATABASE: Database = {
  kind: 'postgresql',
  query: () => Promise.reject(new Error('no request here reaches the database')),
  transaction: () => Promise.reject(new Error('no request here reaches the database')),
  close: async () => undefined,
};
