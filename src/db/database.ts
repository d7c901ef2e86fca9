import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres';

/** Something SQL can run on: the database itself or one open transaction. */
export interface Queryable {
  query<Row extends object = Record<string, unknown>>(sql: string | Statement, params?: unknown[]): Promise<{ rows: Row[] }>;
}

/**
 * SQL that PostgreSQL parses once per connection and keeps (a named prepared statement), once its
 * statistics count PREPARE_FROM_ROWS bodies and unless the URL says `prepare=false`: for what every
 * delivery runs, where parsing and planning cost PostgreSQL more than running it. Its text never
 * varies, and names its result's columns (a prepared `SELECT *` fails once a column is added).
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * Whether `url` lets statements be prepared: yes, unless it says `prepare=false`, for a pooler in
 * transaction mode that keeps no prepared statements (PgBouncer before 1.21, or without
 * `max_prepared_statements`). node-postgres ignores the parameter.
 */
const preparesStatements = (url: string): boolean => !URL.canParse(url) || new URL(url).searchParams.get('prepare') !== 'false';

/** The application database: PostgreSQL through `DATABASE_URL`, or the one `npm run dev` runs itself. */
export interface Database extends Queryable {
  readonly kind: 'postgresql' | 'embedded';
  /** Where the embedded database answers, for other processes (the CLI). */
  readonly url?: string;
  /** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** LISTENs on `channel` on a connection of its own; resolves to what stops listening. */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * PostgreSQL when `url` is set, else the embedded PostgreSQL in `embeddedDir`. `exitOnIdle` lets a short-lived
 * process (the CLI) end with the pool open.
 */
export async function openDatabase(options: { url?: string; embeddedDir?: string; exitOnIdle?: boolean }): Promise<Database> {
  if (options.url) return openPostgres(options.url, options.exitOnIdle ?? false);
  if (options.embeddedDir) return openEmbedded(options.embeddedDir);
  throw new Error('openDatabase needs a PostgreSQL URL or a directory for the embedded database.');
}

/**
 * How many rows of `event_bodies` PostgreSQL's statistics must count before statements are prepared.
 * A prepared statement keeps the plan it chose at its sixth call until the table is analyzed again,
 * however much it grew meanwhile. Chosen with no statistics, a lookup by source and event ID took the
 * smaller `(source, received_at)` index over the primary key; chosen with statistics of a few rows, a
 * scan of the table. Either read every row of a source, on every delivery, until autovacuum came
 * (a minute or more into a new database, thousands of rows later). Every plan read by keys from 100
 * rows on, of the narrowest bodies, and 200 leaves room (test/integration/prepared-statements.test.ts
 * holds them to it here); until then each statement is planned at every call (docs/benchmarks.md).
 */
export const PREPARE_FROM_ROWS = 200;

/** What PostgreSQL's statistics count of `event_bodies` (-1 before any), and how many rows it holds, up to PREPARE_FROM_ROWS. */
const STATISTICS = `SELECT (SELECT reltuples FROM pg_class WHERE oid = to_regclass('event_bodies'))::float8 AS counted,
  (SELECT count(*) FROM (SELECT FROM event_bodies LIMIT ${PREPARE_FROM_ROWS}) AS stored)::int AS stored`;

/** How many statements go unprepared between two looks at the statistics. */
export const STATISTICS_CHECK_EVERY = 100;

async function openPostgres(url: string, exitOnIdle: boolean): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: 10, allowExitOnIdle: exitOnIdle });
  // An idle connection dies when PostgreSQL restarts; the pool drops it and the next query opens a
  // new one. Without a listener, that 'error' event would end the process.
  pool.on('error', () => {});
  // Statements are prepared once PostgreSQL's statistics count PREPARE_FROM_ROWS bodies; until then
  // each is planned for its values, and every STATISTICS_CHECK_EVERY-th looks again. A table that
  // holds that many and was not analyzed since is analyzed then, rather than when autovacuum comes.
  const mayPrepare = preparesStatements(url);
  let prepare = false;
  let unprepared = 0;
  let analyzed = false;
  const checkStatistics = async (): Promise<void> => {
    const { rows } = await pool.query<{ counted: number | null; stored: number }>(STATISTICS);
    const { counted, stored } = rows[0]!;
    prepare = (counted ?? -1) >= PREPARE_FROM_ROWS;
    if (!prepare && stored >= PREPARE_FROM_ROWS && !analyzed) {
      analyzed = true;
      await pool.query('ANALYZE event_bodies');
      return checkStatistics();
    }
  };
  // Before the migrations made the table, or while PostgreSQL is away, a later look answers.
  const lookAgain = () => checkStatistics().catch(() => undefined);
  if (mayPrepare) await lookAgain();
  const queryConfig = (sql: string | Statement, params: unknown[] | undefined): pg.QueryConfig => {
    if (typeof sql === 'string') return { text: sql, values: params };
    if (prepare) return { name: sql.name, text: sql.text, values: params };
    if (mayPrepare && ++unprepared % STATISTICS_CHECK_EVERY === 0) void lookAgain();
    return { text: sql.text, values: params };
  };
  return {
    kind: 'postgresql',
    query: (sql, params) => pool.query(queryConfig(sql, params)),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, params) => client.query(queryConfig(sql, params)) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    async listen(channel, onNotify) {
      let stopped = false;
      // The connection listening now, and what closes it (once, whoever asks first).
      let current: { drop(): void } | undefined;
      // A connection that dies (PostgreSQL restarting) is dropped and LISTEN taken up again on a new
      // one, every second until it works; meanwhile the listener's own poll goes on.
      const connect = async (): Promise<void> => {
        const client = await pool.connect();
        let dropped = false;
        const connection = {
          drop() {
            if (!dropped) client.release(true);
            dropped = true;
          },
        };
        const lost = () => {
          connection.drop();
          if (current !== connection) return;
          current = undefined;
          if (!stopped) reconnectSoon();
        };
        client.on('notification', (message) => {
          if (message.channel === channel) onNotify();
        });
        client.on('error', lost);
        client.on('end', lost);
        try {
          await client.query(`LISTEN ${channel}`);
        } catch (error) {
          connection.drop();
          throw error;
        }
        // Stopped while this connection was on its way: closed, or the pool could never end.
        if (stopped) return connection.drop();
        current = connection;
      };
      const reconnectSoon = (): void => {
        setTimeout(() => {
          if (stopped) return;
          // What was notified while no connection listened is looked at now.
          connect().then(onNotify, reconnectSoon);
        }, 1_000).unref();
      };
      await connect();
      return async () => {
        stopped = true;
        // Closed rather than handed back: a pooled connection would keep this listener's handlers.
        current?.drop();
        current = undefined;
      };
    },
    close: () => pool.end(),
  };
}

/**
 * A real PostgreSQL run by this process (`npm run dev`) in `dir` (src/db/embedded-postgres.ts); this
 * process and the CLI reach it by its URL (`npm run dev` hands it to the CLI: src/dev/handoff.ts).
 */
async function openEmbedded(dir: string): Promise<Database> {
  const server = await startEmbeddedPostgres(dir);
  const db = await openPostgres(server.url, false);
  return {
    ...db,
    kind: 'embedded',
    url: server.url,
    async close() {
      await db.close();
      await server.stop();
    },
  };
}

/** Where `npm run dev` keeps the embedded database, under DATA_DIR. */
export const embeddedDatabaseDir = (dataDir: string) => path.join(dataDir, 'postgres');

/** True for PostgreSQL's unique violation of this constraint. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const { code, constraint: name, message } = error as { code?: string; constraint?: string; message?: string };
  return code === '23505' && (name ?? message ?? '').includes(constraint);
}
