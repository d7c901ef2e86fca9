import { loadReceiverConfig } from '../config';
import { openDatabase } from '../db/database';
import { SourceRegistry } from '../providers/registry';
import { BulkJobs } from '../temporal/bulk-jobs';
import { EntityOperations } from '../temporal/entities';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { EventOperations } from '../temporal/operations';

export interface Operations {
  operations: EventOperations;
  jobs: BulkJobs;
  entities: EntityOperations;
}

/**
 * With DATABASE_URL, `show` adds the event's ledger record (claim and steps) to what Temporal says,
 * and `verify` and `erase` reach the body store; `verify` checks with the receiver's secrets. Bulk
 * jobs run on the worker's task queue (TEMPORAL_TASK_QUEUE).
 */
export async function createOperations(): Promise<Operations> {
  const config = loadReceiverConfig();
  const db = config.databaseUrl ? await openDatabase({ url: config.databaseUrl, exitOnIdle: true }) : undefined;
  const client = lazyClient(temporalSettings());
  const operations = new EventOperations(client, { uiUrl: config.temporalUiUrl, db, sources: new SourceRegistry(config.sources) });
  return { operations, jobs: new BulkJobs(client, operations, { taskQueue: config.taskQueue }), entities: new EntityOperations(client, operations, db) };
}
