import express, { type Request, type Router } from 'express';
import { AdminAuthError, OperationRejectedError } from '../errors';
import { safeEqual } from '../providers/secrets';
import type { Logger } from '../logger';
import { routeErrorHandler } from './problem';
import type { EventOperations } from '../temporal/operations';
import { parseResetTarget } from '../temporal/reset-points';
import type { EventFilter, EventStatusName } from '../temporal/visibility';

/**
 * `/admin`: the operator CLI's operations over HTTP, by event ID, behind `Authorization: Bearer
 * $ADMIN_TOKEN` (compared in constant time).
 */
export function createAdminRouter(operations: EventOperations, token: string, logger: Logger): Router {
  const router = express.Router();

  router.use((req, _res, next) => {
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) throw new AdminAuthError('Send Authorization: Bearer <ADMIN_TOKEN>.');
    if (!safeEqual(header.slice('Bearer '.length), token)) throw new AdminAuthError('The bearer token is not the ADMIN_TOKEN.');
    next();
  });
  router.use(express.json({ limit: '64kb', strict: false }));

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
    const { to, reason } = (req.body ?? {}) as { to?: unknown; reason?: unknown };
    if (typeof reason !== 'string' || reason.trim() === '') throw new OperationRejectedError('Give a "reason" for the reset; it is kept in the workflow history.');
    res.json(await operations.reset(req.params.eventId, parseResetTarget(to ?? 'last-failure'), reason));
  });

  router.use(routeErrorHandler({ realm: 'durable-webhooks admin', internalDetail: 'The operation failed on our side; nothing is known to have changed. See the receiver log.', logger, what: 'admin request' }));
  return router;
}

function filterOf(req: Request): EventFilter {
  const value = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined);
  return { source: value('source'), type: value('type'), status: value('status') as EventStatusName | undefined, since: value('since'), via: value('via'), query: value('query') };
}
