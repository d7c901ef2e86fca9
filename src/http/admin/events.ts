import express from 'express';
import { OperationRejectedError } from '../../core/errors';
import type { EventOperations } from '../../temporal/operations';
import { parseResetTarget } from '../../temporal/reset-points';
import { actor, bodyOf, filterOf } from './context';

/** `/admin/events`: list, show, signal, reset, verify and erase events by event ID. */
export function eventRoutes(operations: EventOperations): express.Router {
  const router = express.Router();
  router.get('/events', async (req, res) => {
    res.json({ events: await operations.list(filterOf(req)) });
  });
  router.get('/events/:eventId', async (req, res) => {
    res.json(await operations.show(req.params.eventId));
  });
  router.post('/events/:eventId/signals/:name', async (req, res) => {
    await operations.signal(req.params.eventId, req.params.name, req.body);
    res.status(202).json({ eventId: req.params.eventId, signal: req.params.name, status: 'sent' });
  });
  router.post('/events/:eventId/reset', async (req, res) => {
    const { to, reason } = bodyOf<'to' | 'reason'>(req);
    res.json(await operations.reset(req.params.eventId, parseResetTarget(to ?? 'last-failure'), reason as string));
  });
  router.get('/events/:eventId/verify', async (req, res) => {
    res.json(await operations.verify(req.params.eventId));
  });
  router.post('/events/:eventId/erase', async (req, res) => {
    const { reason, by } = bodyOf<'reason' | 'by'>(req);
    if (by !== undefined && typeof by !== 'string') throw new OperationRejectedError('"by" must name who asks for the erasure.');
    // Who erased is the token's name; what the caller says (`by`) is kept beside it, as who asked.
    res.json(await operations.erase(req.params.eventId, { by: actor(res), requestedBy: by, reason: reason as string }));
  });
  return router;
}
