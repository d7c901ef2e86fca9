import express from 'express';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Database } from '../../db/database';
import { createHold, listHolds, releaseHolds } from '../../db/holds';
import { actor, bodyOf, rateOf } from './context';

/** What `/admin/holds` needs: the body store, and the sources a hold may name. */
export interface AdminHolds {
  db: Database;
  sources: readonly string[];
}

/** `/admin/holds`: deliveries of a source (or of its types matching a pattern) are stored and answered, and wait for a release. */
export function holdRoutes(holds: AdminHolds | undefined, logger: Logger): express.Router {
  const router = express.Router();
  const available = (): AdminHolds => {
    if (!holds) throw new OperationRejectedError('Holds are not available on this receiver.');
    return holds;
  };
  router.get('/holds', async (req, res) => {
    res.json({ holds: await listHolds(available().db, { all: req.query.all === 'true' }) });
  });
  router.post('/holds', async (req, res) => {
    const { db, sources } = available();
    const { source, type, reason } = bodyOf<'source' | 'type' | 'reason'>(req);
    if (typeof source !== 'string' || !sources.includes(source))
      throw new OperationRejectedError(`"source" must name a source of this receiver: ${sources.join(', ')}.`);
    if (type !== undefined && typeof type !== 'string') throw new OperationRejectedError('"type" must be an event type, or a prefix ending in "*".');
    if (reason !== undefined && typeof reason !== 'string') throw new OperationRejectedError('"reason" must be text.');
    const hold = await createHold(db, { source, typePattern: type, reason, by: actor(res) });
    logger.warn(
      { hold: hold.id, source, type, reason, by: hold.createdBy },
      'hold created: matching deliveries are stored and answered, and start nothing until released',
    );
    res.status(201).json(hold);
  });
  router.delete('/holds/:id', async (req, res) => {
    const rate = req.query.rate === undefined ? undefined : rateOf(req.query.rate);
    const released = await releaseHolds(available().db, { id: req.params.id }, { rate, by: actor(res) });
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });
  router.post('/holds/release', async (req, res) => {
    const { source, type, rate } = bodyOf<'source' | 'type' | 'rate'>(req);
    if (typeof source !== 'string') throw new OperationRejectedError('"source" must name the source whose holds to release.');
    if (type !== undefined && typeof type !== 'string') throw new OperationRejectedError('"type" must be the pattern of the hold to release.');
    const released = await releaseHolds(available().db, { source, typePattern: type }, { rate: rate === undefined ? undefined : rateOf(rate), by: actor(res) });
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });
  return router;
}
