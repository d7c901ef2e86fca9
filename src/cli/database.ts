import { loadCommonConfig } from '../config';
import { openDatabase, type Database } from '../db/database';
import { OperationRejectedError } from '../core/errors';

/** Runs `work` on the database of DATABASE_URL (the one `npm run dev` runs is found by itself), closed after. */
export async function withDatabase(command: string, work: (db: Database) => Promise<void>): Promise<void> {
  const config = loadCommonConfig();
  if (!config.databaseUrl)
    throw new OperationRejectedError(
      `${command} reads and changes the database: set DATABASE_URL (while npm run dev runs, the CLI finds its database by itself).`,
    );
  const db = await openDatabase({ url: config.databaseUrl, exitOnIdle: true });
  try {
    await work(db);
  } finally {
    await db.close();
  }
}
