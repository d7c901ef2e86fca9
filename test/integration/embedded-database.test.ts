import { spawn } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/database';
import { passableTempDir } from '../support/dirs';
import { ROOT } from '../support/processes';

/**
 * The database `npm run dev` runs when DATABASE_URL is unset (src/db/embedded-postgres.ts): each of
 * the pool's connections is a session of its own, so concurrent queries never mix, and a commit it
 * acknowledged survives a SIGKILL of the whole process group. PGlite behind pglite-socket failed
 * both (electric-sql/pglite#1046, #1065).
 */
describe('the embedded database', () => {
  it('runs 2,000 different parameterised queries at once, each with its own parameters, and keeps every row', async () => {
    const db = await openDatabase({ embeddedDir: path.join(passableTempDir('dw-embedded-'), 'postgres') });
    try {
      await db.query('CREATE TABLE mixed (id integer PRIMARY KEY, label text NOT NULL, amount bigint, tags text[])');
      // Four statement shapes with 1, 2, 3 and 4 parameters, interleaved: a query run with another
      // connection's parameters would fail to bind, or write a row that does not match its ID.
      const writes = Array.from({ length: 2000 }, (_, id) => {
        switch (id % 4) {
          case 0:
            return db.query("INSERT INTO mixed (id, label) VALUES ($1, 'zero')", [id]);
          case 1:
            return db.query('INSERT INTO mixed (id, label) VALUES ($1, $2)', [id, `one-${id}`]);
          case 2:
            return db.query('INSERT INTO mixed (id, label, amount) VALUES ($1, $2, $3)', [id, `two-${id}`, id * 100]);
          default:
            return db.transaction(async (tx) =>
              tx.query('INSERT INTO mixed (id, label, amount, tags) VALUES ($1, $2, $3, $4)', [id, `three-${id}`, id * 1000, [`t${id}`]]),
            );
        }
      });
      await Promise.all(writes);
      const { rows } = await db.query<{ id: number; label: string; amount: string | null; tags: string[] | null }>(
        'SELECT id, label, amount, tags FROM mixed ORDER BY id',
      );
      expect(rows).toHaveLength(2000);
      const wrong = rows.filter(({ id, label, amount, tags }) => {
        const expected = [
          { label: 'zero', amount: null, tags: null },
          { label: `one-${id}`, amount: null, tags: null },
          { label: `two-${id}`, amount: String(id * 100), tags: null },
          { label: `three-${id}`, amount: String(id * 1000), tags: [`t${id}`] },
        ][id % 4]!;
        return JSON.stringify({ label, amount, tags }) !== JSON.stringify(expected);
      });
      expect(wrong).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('opens no folder above its own: as root, under a parent the server user cannot pass through, it lives under /var/tmp, and the parent stays as it was', async () => {
    const closed = mkdtempSync(path.join(tmpdir(), 'dw-embedded-closed-'));
    const db = await openDatabase({ embeddedDir: path.join(closed, 'data', 'postgres') });
    try {
      const { rows } = await db.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
      if (process.getuid?.() === 0) expect(rows[0]!.dir).toMatch(/^\/var\/tmp\/durable-webhooks-postgres\/[0-9a-f]{16}\/postgres\/data$/);
      else expect(rows[0]!.dir).toBe(path.join(closed, 'data', 'postgres', 'data'));
      expect(statSync(closed).mode & 0o777).toBe(0o700);
    } finally {
      await db.close();
    }
  });

  it('keeps every commit it acknowledged when the process group running it is SIGKILLed', async () => {
    const dir = path.join(passableTempDir('dw-embedded-kill-'), 'postgres');
    // A process that opens the embedded database, commits rows one after another and prints each
    // ID once its commit returned; it is killed, server and all, in the middle.
    const writer = `
      import { openDatabase } from ${JSON.stringify(path.join(ROOT, 'src/db/database'))};
      (async () => {
        const db = await openDatabase({ embeddedDir: ${JSON.stringify(dir)} });
        await db.query('CREATE TABLE IF NOT EXISTS acknowledged (id integer PRIMARY KEY)');
        for (let id = 0; ; id++) {
          await db.transaction((tx) => tx.query('INSERT INTO acknowledged (id) VALUES ($1)', [id]));
          process.stdout.write(id + '\\n');
        }
      })();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writer], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acknowledged: number[] = [];
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n').filter(Boolean)) acknowledged.push(Number(line));
        if (acknowledged.length >= 300) resolve();
      });
    });
    process.kill(-child.pid!, 'SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    let db: Database | undefined;
    try {
      db = await openDatabase({ embeddedDir: dir });
      const { rows } = await db.query<{ id: number }>('SELECT id FROM acknowledged');
      const stored = new Set(rows.map((row) => row.id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await db?.close();
    }
  });
});
