import express from 'express';
import { ENTITY_ACTIONS } from '../../../contracts';
import { audit } from '../../db/console-sessions';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Database } from '../../db/database';
import type { EntityOperations } from '../../temporal/entities';
import { toProblem } from '../problem';
import { EntityPage } from './pages/entity';
import { entityPath } from './pages/layout';
import { text } from './query';
import { page } from './render';
import { actorOf, requireAdmin, sessionOf } from './session';

const DONE = { skip: 'Skipped: the key goes on without its failed event.', retry: 'Retrying: the failed event runs again in its turn.' } as const;

/**
 * A keyed flow's key (docs/entities.md), as its entity or the database knows it, and an admin's skip
 * or retry of the failed event it is parked on, with a reason, audited. Behind the console's sessions.
 */
export function entityRoutes({ db, entities, logger }: { db: Database; entities: EntityOperations | undefined; logger: Logger }): express.Router {
  const router = express.Router();
  const available = () => {
    if (!entities) throw new OperationRejectedError('Entities are not available on this receiver.');
    return entities;
  };
  router.get('/entities/:flow/:source/:key', async (req, res) => {
    const { flow, source, key } = req.params;
    const done = text(req, 'done') as keyof typeof DONE | undefined;
    const notice = done && DONE[done] ? { kind: 'done' as const, text: DONE[done] } : undefined;
    page(res, <EntityPage session={sessionOf(res)} view={await available().show(flow, key, source)} notice={notice} />);
  });
  for (const action of ENTITY_ACTIONS) {
    router.post(`/entities/:flow/:source/:key/${action}`, requireAdmin, async (req, res) => {
      const { flow, source, key } = req.params;
      const by = actorOf(sessionOf(res));
      const reason = typeof req.body.reason === 'string' ? (req.body.reason as string).trim() : '';
      try {
        await available()[action](flow, key, { source, by, reason: reason && `${reason} (console, by ${by})` });
      } catch (error) {
        if (!(error instanceof OperationRejectedError)) throw error;
        const view = await available().show(flow, key, source);
        page(res.status(toProblem(error).status), <EntityPage session={sessionOf(res)} view={view} notice={{ kind: 'error', text: error.message }} />);
        return;
      }
      await audit(db, { actor: by, action: `${action} the key's failed event`, target: `${flow}/${source}/${key}`, detail: { reason } });
      logger.warn({ flow, source, key, action, by }, 'console action on a key');
      res.redirect(303, `${entityPath({ flow, source, key })}?done=${action}`);
    });
  }
  return router;
}
