import type { NamedToken } from '../../config';
import type { Logger } from '../../core/logger';
import type { Database } from '../../db/database';
import type { RefusalLimits } from '../../db/refusals';
import type { BulkJobs } from '../../temporal/bulk-jobs';
import type { EntityOperations } from '../../temporal/entities';
import type { EventOperations } from '../../temporal/operations';
import type { SecretUse, SourceRoute } from './pages/overview';

/** What the console's routes use: the database, the operations on events and jobs, its tokens and limits. */
export interface ConsoleDeps {
  db: Database;
  operations: EventOperations;
  jobs: BulkJobs;
  /** A keyed flow's keys, for their pages. */
  entities?: EntityOperations;
  /** The receiver's source names, for the event filter. */
  sources: readonly string[];
  /** The sources' own routes (WEBHOOKS_CONFIG), each flow with its filter, for the overview. */
  routes: readonly SourceRoute[];
  admins: readonly NamedToken[];
  viewers: readonly NamedToken[];
  sessionTtlMs: number;
  refusalLimits: RefusalLimits;
  logger: Logger;
  /** Accepted deliveries by source and signing secret, as this receiver counted them (`webhook_signature_verifications_total`). */
  secretUse?: () => Promise<SecretUse[]>;
}
