import { openDatabase, type Database } from '../../src/db/database';
import { migrate, MIGRATIONS } from '../../src/db/migrations';
import { createTestDatabase } from '../support/database';

describe('migrate', () => {
  it('migrates a fresh database once when many processes start at the same moment', async () => {
    const fresh = await createTestDatabase();
    const processes: Database[] = await Promise.all(Array.from({ length: 8 }, () => openDatabase({ url: fresh.url })));
    try {
      const applied = await Promise.all(processes.map((db) => migrate(db)));

      expect(applied.filter((ids) => ids.length > 0)).toEqual([MIGRATIONS.map((migration) => migration.id)]);
      const { rows } = await processes[0]!.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id');
      expect(rows.map((row) => row.id)).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(await migrate(processes[0]!)).toEqual([]);
    } finally {
      await Promise.all(processes.map((db) => db.close()));
      await fresh.drop();
    }
  });
});
