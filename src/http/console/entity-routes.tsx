import express from 'express';
import { OperationRejectedError } from '../../core/errors';
import type { EntityOperations } from '../../temporal/entities';
import { EntityPage } from './pages/entity';
import { page } from './render';
import { sessionOf } from './session';

/** A keyed flow's key (docs/entities.md), as its entity or the database knows it. Behind the console's sessions. */
export function entityRoutes(entities: EntityOperations | undefined): express.Router {
  const router = express.Router();
  router.get('/entities/:flow/:source/:key', async (req, res) => {
    if (!entities) throw new OperationRejectedError('Entities are not available on this receiver.');
    page(res, <EntityPage session={sessionOf(res)} view={await entities.show(req.params.flow, req.params.key, req.params.source)} />);
  });
  return router;
}
