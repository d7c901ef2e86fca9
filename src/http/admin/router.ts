import express, { type Router } from 'express';
import type { NamedToken } from '../../config';
import type { Logger } from '../../core/logger';
import type { BulkJobs } from '../../temporal/bulk-jobs';
import type { EntityOperations } from '../../temporal/entities';
import type { EventOperations } from '../../temporal/operations';
import { limitFailedAttempts, requireToken } from '../bearer';
import { routeErrorHandler } from '../problem';
import { backfillRoutes, type AdminBackfills } from './backfill';
import { bulkRoutes } from './bulk';
import { entityRoutes } from './entities';
import { eventRoutes } from './events';
import type { HoldOperations } from '../../operator/holds';
import { holdRoutes } from './holds';

/** What `/admin` serves: the event operations, its tokens, and each route group's own. */
export interface AdminDeps {
  operations: EventOperations;
  tokens: NamedToken[];
  backfills?: AdminBackfills;
  holds?: HoldOperations;
  jobs?: BulkJobs;
  entities?: EntityOperations;
}

/**
 * `/admin`: the operator CLI's operations over HTTP, by event ID, behind `Authorization: Bearer
 * <ADMIN_TOKEN or one of ADMIN_TOKENS>` (compared in constant time); the token's name is who acts.
 * One module per route group: events, backfill, holds, bulk jobs, entities.
 */
export function createAdminRouter({ operations, tokens, backfills, holds, jobs, entities }: AdminDeps, logger: Logger): Router {
  const router = express.Router();
  router.use(limitFailedAttempts(tokens.map(({ token }) => token)), requireToken(tokens, 'ADMIN_TOKEN'));
  router.use(express.json({ limit: '64kb', strict: false, inflate: false }));
  router.use(eventRoutes(operations));
  router.use(backfillRoutes(operations, backfills));
  router.use(holdRoutes(holds, logger));
  router.use(bulkRoutes(jobs, logger));
  router.use(entityRoutes(entities));
  router.use(
    routeErrorHandler({
      realm: 'durable-webhooks admin',
      internalDetail: 'The operation failed on our side; nothing is known to have changed. See the receiver log.',
      logger,
      what: 'admin request',
    }),
  );
  return router;
}
