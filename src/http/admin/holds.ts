import express from 'express';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { HoldOperations } from '../../operator/holds';
import { actor, bodyOf, rateOf } from './context';

/** `/admin/holds`: deliveries of a source (or of its types matching a pattern) are stored and answered, and wait for a release. */
export function holdRoutes(holds: HoldOperations | undefined, logger: Logger): express.Router {
  const router = express.Router();
  const available = (): HoldOperations => {
    if (!holds) throw new OperationRejectedError('Holds are not available on this receiver.');
    return holds;
  };
  router.get('/holds', async (req, res) => {
    res.json({ holds: await available().list({ all: req.query.all === 'true' }) });
  });
  router.post('/holds', async (req, res) => {
    const { source, type, reason } = bodyOf<'source' | 'type' | 'reason'>(req);
    const hold = await available().hold({ source, type, reason }, actor(res));
    logger.warn(
      { hold: hold.id, source, type, reason, by: hold.createdBy },
      'hold created: matching deliveries are stored and answered, and start nothing until released',
    );
    res.status(201).json(hold);
  });
  router.delete('/holds/:id', async (req, res) => {
    const rate = req.query.rate === undefined ? undefined : rateOf(req.query.rate);
    const released = await available().release({ id: req.params.id }, { rate }, actor(res));
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });
  router.post('/holds/release', async (req, res) => {
    const { source, type, rate } = bodyOf<'source' | 'type' | 'rate'>(req);
    const released = await available().release({ source, type }, { rate: rate === undefined ? undefined : rateOf(rate) }, actor(res));
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });
  return router;
}
