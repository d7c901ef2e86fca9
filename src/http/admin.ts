import express, { type Request, type RequestHandler, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { NamedToken } from '../config';
import { AdminAuthError, OperationRejectedError, TooManyFailedAttemptsError } from '../core/errors';
import { safeEqual } from '../providers/secrets';
import type { Logger } from '../core/logger';
import { routeErrorHandler, sendProblem, toProblem } from './problem';
import type { EventOperations } from '../temporal/operations';
import { parseResetTarget } from '../temporal/reset-points';
import { RECONCILE_PROVIDERS } from '../temporal/schedules';
import { pointInTime } from '../core/duration';
import { FILTER_FIELDS, type EventFilter } from '../temporal/visibility';
import type { BackfillInput } from '../../contracts';
import type { Backfills } from '../backfill/jobs';
import { readConfirmation, type BulkJobs } from '../temporal/bulk-jobs';
import { BULK_ACTIONS, type BulkActionName } from '../../contracts';
import type { Database } from '../db/database';
import { createHold, listHolds, releaseHolds } from '../db/holds';
import { readRate } from '../config/sources';
import { ConfigError } from '../core/errors';

/** What `/admin/holds` needs: the body store, and the sources a hold may name. */
export interface AdminHolds {
  db: Database;
  sources: readonly string[];
}

/** Starts backfills as workflows, and names the Stripe sources of WEBHOOKS_CONFIG one may go to. */
export type AdminBackfills = Pick<Backfills, 'start' | 'status' | 'stripeSources'>;

/**
 * `/admin`: the operator CLI's operations over HTTP, by event ID, behind `Authorization: Bearer
 * <ADMIN_TOKEN or one of ADMIN_TOKENS>` (compared in constant time); the token's name is who acts.
 */
export function createAdminRouter(
  operations: EventOperations,
  tokens: NamedToken[],
  logger: Logger,
  backfills?: AdminBackfills,
  holds?: AdminHolds,
  jobs?: BulkJobs,
): Router {
  const router = express.Router();

  router.use(limitFailedAttempts(tokens.map(({ token }) => token)), requireToken(tokens, 'ADMIN_TOKEN'));
  router.use(express.json({ limit: '64kb', strict: false, inflate: false }));

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
    if (typeof reason !== 'string' || reason.trim() === '')
      throw new OperationRejectedError('Give a "reason" for the reset; it is kept in the workflow history.');
    res.json(await operations.reset(req.params.eventId, parseResetTarget(to ?? 'last-failure'), reason));
  });

  router.get('/events/:eventId/verify', async (req, res) => {
    res.json(await operations.verify(req.params.eventId));
  });

  router.post('/events/:eventId/erase', async (req, res) => {
    const { reason, by } = (req.body ?? {}) as { reason?: unknown; by?: unknown };
    if (typeof reason !== 'string' || reason.trim() === '')
      throw new OperationRejectedError('Give a "reason" for the erasure (the request it answers); it is kept in the ledger.');
    if (by !== undefined && (typeof by !== 'string' || by.trim() === '')) throw new OperationRejectedError('"by" must name who asks for the erasure.');
    // Who erased is the token's name; what the caller says (`by`) is kept beside it, as who asked.
    res.json(
      await operations.erase(req.params.eventId, { by: `admin token "${res.locals.tokenName as string}"`, requestedBy: by as string | undefined, reason }),
    );
  });

  router.post('/backfill', async (req, res) => {
    if (!backfills) throw new OperationRejectedError('Backfill is not available on this receiver.');
    const body = (req.body ?? {}) as {
      provider?: unknown;
      source?: unknown;
      since?: unknown;
      until?: unknown;
      types?: unknown;
      dryRun?: unknown;
      redeliver?: unknown;
    };
    if (!(RECONCILE_PROVIDERS as readonly unknown[]).includes(body.provider))
      throw new OperationRejectedError(`"provider" must be ${RECONCILE_PROVIDERS.join(', ')}.`);
    if (body.source !== undefined && (typeof body.source !== 'string' || !backfills.stripeSources.includes(body.source)))
      throw new OperationRejectedError('"source" must name a Stripe source of WEBHOOKS_CONFIG.');
    if (typeof body.since !== 'string') throw new OperationRejectedError('"since" is required: a duration (30m, 72h, 7d) or an ISO 8601 time.');
    if (body.until !== undefined && typeof body.until !== 'string') throw new OperationRejectedError('"until" must be a duration or an ISO 8601 time.');
    if (body.types !== undefined && !(Array.isArray(body.types) && body.types.every((type) => typeof type === 'string')))
      throw new OperationRejectedError('"types" must be a list of event types.');
    const started = await backfills.start({
      provider: body.provider as BackfillInput['provider'],
      ...(typeof body.source === 'string' && { source: body.source }),
      since: pointInTime(body.since, 'since').toISOString(),
      ...(typeof body.until === 'string' && { until: pointInTime(body.until, 'until').toISOString() }),
      ...(body.types !== undefined && { types: body.types as string[] }),
      mode: body.dryRun === true ? 'dry-run' : body.redeliver === true ? 'redeliver' : 'start',
    });
    res.status(202).json({ ...started, status: 'started', link: operations.uiLink(started.workflowId) });
  });

  router.get('/backfill/:source', async (req, res) => {
    if (!backfills) throw new OperationRejectedError('Backfill is not available on this receiver.');
    res.json(await backfills.status(req.params.source));
  });

  const actor = (res: express.Response) => `admin token "${res.locals.tokenName as string}"`;

  // Holds: deliveries of a source (or of its types matching a pattern) are stored and answered, and wait.
  const holdStore = (): AdminHolds => {
    if (!holds) throw new OperationRejectedError('Holds are not available on this receiver.');
    return holds;
  };

  router.get('/holds', async (req, res) => {
    res.json({ holds: await listHolds(holdStore().db, { all: req.query.all === 'true' }) });
  });

  router.post('/holds', async (req, res) => {
    const { db, sources } = holdStore();
    const { source, type, reason } = (req.body ?? {}) as { source?: unknown; type?: unknown; reason?: unknown };
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
    const released = await releaseHolds(holdStore().db, { id: req.params.id }, { rate, by: actor(res) });
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });

  router.post('/holds/release', async (req, res) => {
    const { source, type, rate } = (req.body ?? {}) as { source?: unknown; type?: unknown; rate?: unknown };
    if (typeof source !== 'string') throw new OperationRejectedError('"source" must name the source whose holds to release.');
    if (type !== undefined && typeof type !== 'string') throw new OperationRejectedError('"type" must be the pattern of the hold to release.');
    const released = await releaseHolds(holdStore().db, { source, typePattern: type }, { rate: rate === undefined ? undefined : rateOf(rate), by: actor(res) });
    logger.warn({ holds: released.released.map((hold) => hold.id), rate, by: actor(res) }, 'hold released');
    res.json(released);
  });

  // Bulk actions by filter, as durable jobs (src/temporal/bulk-jobs.ts).
  const bulkJobs = (): BulkJobs => {
    if (!jobs) throw new OperationRejectedError('Bulk jobs are not available on this receiver.');
    return jobs;
  };

  router.post('/bulk', async (req, res) => {
    const body = (req.body ?? {}) as {
      action?: unknown;
      filter?: unknown;
      to?: unknown;
      reason?: unknown;
      signal?: unknown;
      rate?: unknown;
      dryRun?: unknown;
      yes?: unknown;
      confirm?: unknown;
    };
    if (!(BULK_ACTIONS as readonly unknown[]).includes(body.action)) throw new OperationRejectedError(`"action" must be one of ${BULK_ACTIONS.join(', ')}.`);
    const action = body.action as BulkActionName;
    const filter = (body.filter ?? {}) as Record<string, unknown>;
    if (typeof filter !== 'object' || Array.isArray(filter) || Object.keys(filter).length === 0)
      throw new OperationRejectedError(`"filter" must name what to act on: ${FILTER_FIELDS.join(', ')}.`);
    const unknown = Object.keys(filter).filter((key) => !(FILTER_FIELDS as readonly string[]).includes(key));
    if (unknown.length > 0 || Object.values(filter).some((value) => typeof value !== 'string'))
      throw new OperationRejectedError(`"filter" takes text values of ${FILTER_FIELDS.join(', ')}${unknown.length ? `, not ${unknown.join(', ')}` : ''}.`);
    if (typeof body.reason !== 'string' || body.reason.trim() === '')
      throw new OperationRejectedError('Give a "reason"; it is kept in the job and in each event\'s history.');
    if (action === 'reset') parseResetTarget(body.to ?? 'last-failure');
    const signal = body.signal as { name?: unknown; data?: unknown } | undefined;
    if (action === 'signal' && (typeof signal !== 'object' || signal === null || typeof signal.name !== 'string'))
      throw new OperationRejectedError('A bulk signal needs "signal": {"name": …, "data": …}.');
    const answer = await bulkJobs().request(
      {
        action,
        filter: filter as EventFilter,
        ...(typeof body.to === 'string' && { to: body.to }),
        reason: body.reason,
        ...(action === 'signal' && { signal: { name: signal!.name as string, data: signal!.data } }),
        ...(body.rate !== undefined && { rate: rateOf(body.rate) }),
        by: actor(res),
      },
      {
        dryRun: body.dryRun === true,
        yes: body.yes === true,
        confirmed:
          body.confirm === undefined
            ? undefined
            : readConfirmation((body.confirm as { count?: unknown } | null)?.count, (body.confirm as { until?: unknown } | null)?.until),
      },
    );
    if (!answer.dryRun) logger.warn({ jobId: answer.jobId, action, count: answer.count, by: actor(res) }, 'bulk job started');
    res.status(answer.dryRun ? 200 : 202).json(answer);
  });

  router.get('/bulk', async (_req, res) => {
    res.json({ jobs: await bulkJobs().list() });
  });

  router.get('/bulk/:jobId', async (req, res) => {
    res.json(await bulkJobs().show(req.params.jobId));
  });

  router.delete('/bulk/:jobId', async (req, res) => {
    await bulkJobs().stop(req.params.jobId);
    logger.warn({ jobId: req.params.jobId, by: actor(res) }, 'bulk job stop requested');
    res.status(202).json({ jobId: req.params.jobId, status: 'stop requested' });
  });

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

/**
 * Bearer auth against named tokens (constant-time); the matching token's name goes to
 * `res.locals.tokenName`. `variable` names what to send in the 401.
 */
export function requireToken(tokens: NamedToken[], variable: string): RequestHandler {
  return (req, res, next) => {
    const presented = bearerToken(req);
    if (presented === undefined) throw new AdminAuthError(`Send Authorization: Bearer <${variable}>.`);
    const match = tokens.find(({ token }) => safeEqual(presented, token));
    if (!match) throw new AdminAuthError(`The bearer token is not the ${variable}.`);
    res.locals.tokenName = match.name;
    next();
  };
}

/** Failed bearer attempts (401) one client address may make per minute on `/admin`, `/codec` and `/v1`; more get 429. */
export const MAX_FAILED_ATTEMPTS_PER_MINUTE = 10;

/**
 * Counts only requests without one of `tokens`, per client address (TRUST_PROXY-aware): guessing is
 * slowed, operators and API clients are not, however many of their requests run at once (a request
 * with an accepted token is never counted, not even while it runs).
 */
export function limitFailedAttempts(tokens: readonly string[]): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: MAX_FAILED_ATTEMPTS_PER_MINUTE,
    skip: (req) => {
      const presented = bearerToken(req);
      return presented !== undefined && tokens.some((token) => safeEqual(presented, token));
    },
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (_req, res) => sendProblem(res, toProblem(new TooManyFailedAttemptsError({ limit: MAX_FAILED_ATTEMPTS_PER_MINUTE }))),
  });
}

/** The token of an `Authorization: Bearer …` header, if the request has one. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

/** A rate from a request (`20/s`, `600/m`, `20`), refused as the caller's mistake. */
function rateOf(value: unknown): number {
  try {
    return readRate(value, '"rate"');
  } catch (error) {
    if (error instanceof ConfigError) throw new OperationRejectedError(error.message);
    throw error;
  }
}

/** `GET /admin/events`'s filter: the query parameters of the fields a bulk filter takes. */
function filterOf(req: Request): EventFilter {
  return Object.fromEntries(FILTER_FIELDS.flatMap((field) => (typeof req.query[field] === 'string' ? [[field, req.query[field]]] : [])));
}
