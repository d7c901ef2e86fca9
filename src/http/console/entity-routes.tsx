import express from 'express';
import { audit } from '../../db/console-sessions';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Database } from '../../db/database';
import { entityActionNamed, ENTITY_OPERATOR_ACTIONS } from '../../operator/entity-actions';
import { readActionInput } from '../../operator/event-actions';
import type { EntityOperations } from '../../temporal/entities';
import { toProblem } from '../problem';
import { EntityPage } from './pages/entity';
import { entityPath } from './pages/layout';
import { text } from './query';
import { page } from './render';
import { actorOf, requireAdmin, sessionOf } from './session';

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
    const done = entityActionNamed(text(req, 'done') ?? '')?.done;
    const notice = done ? { kind: 'done' as const, text: done } : undefined;
    page(res, <EntityPage session={sessionOf(res)} view={await available().show(flow, key, source)} notice={notice} />);
  });
  for (const action of ENTITY_OPERATOR_ACTIONS) {
    router.post(`/entities/:flow/:source/:key/${action.name}`, requireAdmin, async (req, res) => {
      const { flow, source, key } = req.params;
      const by = actorOf(sessionOf(res));
      const reason = typeof req.body.reason === 'string' ? (req.body.reason as string).trim() : '';
      try {
        // The operator's reason with who gave it; a blank one stays blank, for the operation to refuse.
        const input = readActionInput(action, { reason: reason && `${reason} (console, by ${by})` });
        await action.run(available(), flow, key, input, { source, by });
      } catch (error) {
        if (!(error instanceof OperationRejectedError)) throw error;
        const view = await available().show(flow, key, source);
        page(res.status(toProblem(error).status), <EntityPage session={sessionOf(res)} view={view} notice={{ kind: 'error', text: error.message }} />);
        return;
      }
      await audit(db, { actor: by, action: action.audited, target: `${flow}/${source}/${key}`, detail: { reason } });
      logger.warn({ flow, source, key, action: action.name, by }, 'console action on a key');
      res.redirect(303, `${entityPath({ flow, source, key })}?done=${action.name}`);
    });
  }
  return router;
}
