import express from 'express';
import { OperationRejectedError } from '../../core/errors';
import { ENTITY_OPERATOR_ACTIONS } from '../../operator/entity-actions';
import { readActionInput } from '../../operator/event-actions';
import type { EntityOperations } from '../../temporal/entities';
import { actor, bodyOf } from './context';

/** `/admin/entities`: a keyed flow's keys (docs/entities.md); skip or retry the failed event a key is parked on. */
export function entityRoutes(entities: EntityOperations | undefined): express.Router {
  const router = express.Router();
  const available = (): EntityOperations => {
    if (!entities) throw new OperationRejectedError('Entities are not available on this receiver.');
    return entities;
  };
  const source = (req: express.Request) => (typeof req.query.source === 'string' ? req.query.source : undefined);
  router.get('/entities', async (req, res) => {
    const flow = typeof req.query.flow === 'string' ? req.query.flow : undefined;
    res.json({ entities: await available().list({ flow, parked: req.query.parked === 'true' }) });
  });
  router.get('/entities/:flow/:key', async (req, res) => {
    res.json(await available().show(req.params.flow, req.params.key, source(req)));
  });
  for (const action of ENTITY_OPERATOR_ACTIONS) {
    router.post(`/entities/:flow/:key/${action.name}`, async (req, res) => {
      const input = readActionInput(action, bodyOf(req));
      res.json({ ...(await action.run(available(), req.params.flow, req.params.key, input, { source: source(req), by: actor(res) })), action: action.name });
    });
  }
  return router;
}
