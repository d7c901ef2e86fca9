import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { startLocalPostgres, type LocalPostgres } from '../../src/cluster/postgres';
import { ensureSchemas, TEMPORAL_DATABASES } from '../../src/cluster/schemas';
import { PostgresRefusedError, PostgresUnreachableError } from '../../src/core/errors';
import { temporalSqlToolPath } from '../../src/core/tools';
import { freePort } from '../support/ports';
import { ROOT, spawnTs } from '../support/processes';

/**
 * Temporal's schemas: what `npm run cluster` sets up, and what docker-compose.yml's temporal-schema
 * job runs in the admin-tools image, replayed here with the same temporal-sql-tool version.
 */
let postgres: LocalPostgres;
beforeAll(async () => {
  postgres = startLocalPostgres({ port: await freePort(), user: 'temporal' });
});
afterAll(() => postgres.remove());

async function schemaVersions(): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const database of Object.keys(TEMPORAL_DATABASES)) {
    const client = new pg.Client({ connectionString: postgres.url.replace(/\/postgres$/, `/${database}`) });
    await client.connect();
    const { rows } = await client.query<{ curr_version: string }>('SELECT curr_version FROM schema_version');
    versions[database] = rows[0]!.curr_version;
    await client.end();
  }
  return versions;
}

/** docker-compose.yml's temporal-schema command, as its shell would run it (compose turns $$ into $). */
function runComposeSchemaJob(): void {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { command: string[]; environment: Record<string, string | number> }>;
  };
  const job = compose.services['temporal-schema']!;
  const url = new URL(postgres.url);
  const env = {
    ...Object.fromEntries(Object.entries(job.environment).map(([name, value]) => [name, String(value)])),
    SQL_HOST: url.hostname,
    SQL_PORT: url.port,
    SQL_PASSWORD: decodeURIComponent(url.password),
  };
  const bin = path.dirname(temporalSqlToolPath());
  execFileSync('sh', ['-c', job.command.join('\n').replaceAll('$$', '$')], { env: { ...env, PATH: `${bin}:${process.env.PATH}` }, stdio: 'pipe' });
}

it('keeps its local PostgreSQL to its own user: a 0700 folder (socket included), and a password on every connection', async () => {
  expect(statSync(postgres.dir).mode & 0o777).toBe(0o700);
  const url = new URL(postgres.url);
  expect(url.password).not.toBe('');
  url.password = 'not-the-password';
  const wrong = new pg.Client({ connectionString: url.toString() });
  await expect(wrong.connect()).rejects.toMatchObject({ code: '28P01' });
  await wrong.end().catch(() => undefined);
});

it("compose's schema job creates both databases on the first run and only upgrades on the next; npm run cluster then finds them current", async () => {
  runComposeSchemaJob();
  const first = await schemaVersions();
  expect(Object.values(first).every((version) => /^\d+\.\d+/.test(version))).toBe(true);
  runComposeSchemaJob();
  await ensureSchemas(postgres.url);
  expect(await schemaVersions()).toEqual(first);
}, 120_000);

/** docker-compose.yml's webhooks-database command, against this PostgreSQL as its shell would run it. */
function runComposeDatabaseJob(password: string): void {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { command: string[]; environment: Record<string, string | number> }>;
  };
  const job = compose.services['webhooks-database']!;
  const url = new URL(postgres.url);
  const env = {
    ...Object.fromEntries(Object.entries(job.environment).map(([name, value]) => [name, String(value)])),
    PGHOST: url.hostname,
    PGPORT: url.port,
    PGPASSWORD: url.password,
    WEBHOOKS_DB_PASSWORD: password,
  };
  execFileSync('sh', ['-c', job.command.join('\n').replaceAll('$$', '$')], { env: { ...env, PATH: process.env.PATH }, stdio: 'pipe' });
}

it("compose's webhooks-database job gives our database its own role, and takes over the tables an older stack made as Temporal's role", async () => {
  const url = new URL(postgres.url);
  // An older stack: the webhooks database and a table of ours, made by Temporal's role.
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query('CREATE DATABASE webhooks');
  await admin.end();
  const older = new pg.Client({ connectionString: postgres.url.replace(/\/postgres$/, '/webhooks') });
  await older.connect();
  await older.query('CREATE TABLE processed_events (source text)');
  await older.end();

  // Twice: a later `docker compose up` changes nothing, and keeps the password in step.
  runComposeDatabaseJob('first-password');
  runComposeDatabaseJob('second-password');
  const own = new pg.Client({ connectionString: `postgres://webhooks:second-password@${url.host}/webhooks` });
  await own.connect();
  try {
    const { rows } = await own.query<{ tableowner: string }>(`SELECT tableowner FROM pg_tables WHERE schemaname = 'public'`);
    expect(rows).toEqual([{ tableowner: 'webhooks' }]);
    await own.query('CREATE TABLE made_by_our_role (id int)');
    await expect(own.query('CREATE DATABASE not_ours')).rejects.toThrow(/permission denied/);
  } finally {
    await own.end();
  }
});

it('npm run cluster says what to start when no PostgreSQL answers at TEMPORAL_DB_URL', async () => {
  const closed = await freePort();
  const cluster = spawnTs('src/temporal-cluster.ts', [], {
    TEMPORAL_DB_URL: `postgres://temporal:temporal@127.0.0.1:${closed}/postgres`,
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
  });
  expect(await cluster.exited).toBe(1);
  const lines = cluster.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!).message).toMatch(
    new RegExp(`PostgreSQL does not answer at 127\\.0\\.0\\.1:${closed} \\(TEMPORAL_DB_URL\\).*docker run .*postgres:16.*or set TEMPORAL_DB_URL`),
  );
  expect(cluster.output()).not.toContain('temporal:temporal@');
});

it('a PostgreSQL that answers at TEMPORAL_DB_URL but refuses its user is named as such, not as absent (npm run cluster starts none of its own on that port)', async () => {
  const refused = new URL(postgres.url);
  refused.username = 'nobody_here';
  const failure = await ensureSchemas(refused.href).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(PostgresRefusedError);
  expect(failure).not.toBeInstanceOf(PostgresUnreachableError);
  expect((failure as Error).message).toMatch(
    new RegExp(
      `^PostgreSQL at 127\\.0\\.0\\.1:${refused.port} refused user "nobody_here" \\(TEMPORAL_DB_URL\\): .*nobody_here.*Set TEMPORAL_DB_URL to a user of it that may create databases`,
    ),
  );
});
