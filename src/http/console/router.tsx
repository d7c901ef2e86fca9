import { randomUUID } from 'node:crypto';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { NamedToken } from '../../config';
import { audit, auditOf } from '../../db/console-sessions';
import type { Database } from '../../db/database';
import { loadBodyByWorkflowId, unroutedTypes } from '../../db/event-bodies';
import { failureGroups, LISTED_STATUSES, listedEvent, listEvents, receivedPerMinute, type ListedStatus, type ListFilter } from '../../db/event-list';
import { startBacklog } from '../../db/inbox';
import { listRefusals, refusalCounts, type RefusalLimits } from '../../db/refusals';
import { EventNotFoundError, OperationRejectedError } from '../../core/errors';
import { DEFAULT_FLOW, flowNamed } from '../../flows';
import type { Logger } from '../../core/logger';
import { errorLine } from '../../core/redact';
import type { BulkJobs } from '../../temporal/bulk-jobs';
import type { EventView } from '../../temporal/event-view';
import type { EventOperations } from '../../temporal/operations';
import { parseResetTarget } from '../../temporal/reset-points';
import { pointInTime } from '../../core/duration';
import { toProblem } from '../problem';
import { actionOf, CONFIRM, DONE, signalData, type EventAction } from './actions';
import { receivedChart } from './charts';
import { decodeDelivery } from './delivery';
import { failureRoutes } from './failure-routes';
import { page } from './render';
import { actorOf, requireAdmin, sessionOf, sessions } from './session';
import { ConfirmPage } from './pages/confirm';
import { EventPage, type EventPageData } from './pages/event';
import { EventsPage, type EventsQuery } from './pages/events';
import { eventPath } from './pages/layout';
import { OverviewPage, type SecretUse } from './pages/overview';
import { RefusedPage } from './pages/refused';
import { ProblemPage } from './pages/sign-in';

export interface ConsoleDeps {
  db: Database;
  operations: EventOperations;
  jobs: BulkJobs;
  /** The receiver's source names, for the event filter. */
  sources: readonly string[];
  admins: readonly NamedToken[];
  viewers: readonly NamedToken[];
  sessionTtlMs: number;
  refusalLimits: RefusalLimits;
  logger: Logger;
  /** Accepted deliveries by source and signing secret, as this receiver counted them (`webhook_signature_verifications_total`). */
  secretUse?: () => Promise<SecretUse[]>;
}

/**
 * The event console: server-rendered pages (React, escaped by construction), one script and one
 * stylesheet of its own and Chart.js, under a Content-Security-Policy that allows nothing else.
 * Sign-in exchanges an admin or viewer token for a session cookie; every POST carries the session's
 * CSRF token; viewers see everything and may not act or reveal.
 */
/** Rows a list page shows. */
const PAGE = 50;

export function createConsoleRouter(deps: ConsoleDeps): express.Router {
  const { db, operations, jobs, logger } = deps;
  const router = express.Router();

  router.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          objectSrc: ["'none'"],
        },
      },
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  const assets = path.join(__dirname, 'assets');
  router.get('/assets/console.js', (_req, res) => res.sendFile(path.join(assets, 'console.js')));
  router.get('/assets/console.css', (_req, res) => res.sendFile(path.join(assets, 'console.css')));
  router.get('/assets/chart.umd.min.js', (_req, res) => res.sendFile(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js')));

  // Sign-in, the session every other page needs, its CSRF check, sign-out (./session.tsx).
  router.use(sessions({ db, admins: deps.admins, viewers: deps.viewers, sessionTtlMs: deps.sessionTtlMs, logger }));

  router.get('/', async (_req, res) => {
    const [backlog, refusals, groups, unrouted] = await Promise.all([
      startBacklog(db),
      refusalCounts(db, 3600_000),
      failureGroups(db, { limit: 5 }),
      unroutedTypes(db, DEFAULT_FLOW.name, 3600_000, 20),
    ]);
    const secretUse = (await deps.secretUse?.()) ?? [];
    page(res, <OverviewPage session={sessionOf(res)} data={{ backlog, refusals, groups, unrouted, secretUse }} />);
  });

  router.get('/api/received.json', async (_req, res) => {
    res.json(receivedChart(await receivedPerMinute(db, 60), 60));
  });

  router.get('/refused', async (req, res) => {
    const filter = { source: text(req, 'source'), reason: text(req, 'reason') };
    const before = text(req, 'before');
    if (before !== undefined && !/^\d{1,19}$/.test(before)) throw new OperationRejectedError('"before" must be a refusal ID from the previous page.');
    const refusals = await listRefusals(db, { ...filter, before, limit: PAGE + 1 });
    const next = refusals.length > PAGE ? refusals[PAGE - 1]!.id : null;
    const limits = { maxRows: deps.refusalLimits.maxRows, retentionDays: Math.round(deps.refusalLimits.retentionMs / 86_400_000) };
    page(res, <RefusedPage session={sessionOf(res)} refusals={refusals.slice(0, PAGE)} filter={filter} next={next} limits={limits} />);
  });

  router.get('/events', async (req, res) => {
    const query: EventsQuery = Object.fromEntries(
      ['source', 'type', 'status', 'tenant', 'error', 'group', 'since', 'until', 'via']
        .map((name) => [name, text(req, name)])
        .filter(([, value]) => value !== undefined),
    );
    const session = sessionOf(res);
    let filter: ListFilter;
    try {
      filter = listFilter(query);
    } catch (error) {
      if (!(error instanceof OperationRejectedError)) throw error;
      page(res.status(400), <EventsPage session={session} sources={deps.sources} query={query} events={[]} next={null} error={error.message} />);
      return;
    }
    const { events, next } = await listEvents(db, filter, { after: text(req, 'after'), limit: PAGE });
    page(res, <EventsPage session={session} sources={deps.sources} query={query} events={events} next={next} />);
  });

  router.get('/events/:eventId', async (req, res) => {
    const done = text(req, 'done');
    const notice = done && DONE[done as EventAction] ? { kind: 'done' as const, text: DONE[done as EventAction] } : undefined;
    page(res, <EventPage session={sessionOf(res)} data={await eventPage(req.params.eventId, { reveal: false, notice })} />);
  });

  router.post('/events/:eventId/reveal', requireAdmin, async (req, res) => {
    const data = await eventPage(req.params.eventId, { reveal: true });
    await audit(db, { actor: actorOf(sessionOf(res)), action: 'revealed personal values', target: req.params.eventId });
    logger.warn({ eventId: req.params.eventId, by: actorOf(sessionOf(res)) }, 'console: personal values revealed');
    page(res, <EventPage session={sessionOf(res)} data={{ ...data, audit: await auditOf(db, req.params.eventId) }} />);
  });

  router.get('/events/:eventId/confirm/:action', requireAdmin, async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action);
    const fields: Record<string, string> = {};
    let what: string;
    if (action === 'signal') {
      const name = text(req, 'signal') ?? '';
      const data = signalData(req.query);
      fields.signal = name;
      if (data !== undefined) fields.data = JSON.stringify(data);
      const signal = flowNamed((await operations.show(eventId)).workflowType)?.signals.find((each) => each.name === name);
      if (!signal) throw new OperationRejectedError(`Event ${eventId}'s flow has no signal "${name}".`);
      const checked = signal.read(data, { workflowId: eventId });
      if (!checked.ok) throw new OperationRejectedError(`${checked.error}.`);
      what = `Sends ${name} to event ${eventId}${data === undefined ? '' : ` with ${JSON.stringify(checked.value)}`}: it ${signal.description}.`;
    } else {
      what = CONFIRM[action](eventId);
    }
    page(
      res,
      <ConfirmPage
        session={sessionOf(res)}
        eventId={eventId}
        action={action}
        what={what}
        fields={fields}
        needsReason={action !== 'signal' && action !== 'cancel'}
      />,
    );
  });

  router.post('/events/:eventId/:action', requireAdmin, async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action);
    const session = sessionOf(res);
    const reason = typeof req.body.reason === 'string' ? (req.body.reason as string).trim() : '';
    if ((action === 'retry' || action === 'reset' || action === 'erase') && reason === '')
      throw new OperationRejectedError(`Give a reason for the ${action}; it is kept in the history and the audit trail.`);
    const by = actorOf(session);
    try {
      switch (action) {
        case 'signal': {
          const data = typeof req.body.data === 'string' ? (JSON.parse(req.body.data as string) as unknown) : undefined;
          await operations.signal(eventId, String(req.body.signal), data);
          break;
        }
        case 'retry': {
          const result = await operations.apply('retry', eventId, { reason: `${reason} (console, by ${by})`, requestId: randomUUID() });
          if (result.outcome !== 'done') throw new OperationRejectedError(`Nothing was retried: the event is ${result.detail}.`);
          break;
        }
        case 'reset':
          await operations.reset(eventId, parseResetTarget('last-failure'), `${reason} (console, by ${by})`);
          break;
        case 'cancel':
          await operations.cancel(eventId);
          break;
        case 'erase':
          await operations.erase(eventId, { by, reason });
          break;
      }
    } catch (error) {
      if (!(error instanceof OperationRejectedError || error instanceof SyntaxError) && toProblem(error).status >= 500) throw error;
      const data = await eventPage(eventId, { reveal: false, notice: { kind: 'error', text: toProblem(error).detail } });
      page(res.status(error instanceof SyntaxError ? 400 : toProblem(error).status), <EventPage session={session} data={data} />);
      return;
    }
    await audit(db, {
      actor: by,
      action: action === 'signal' ? `sent ${String(req.body.signal)}` : action,
      target: eventId,
      detail: { reason: reason || undefined },
    });
    logger.warn({ eventId, action, by }, 'console action');
    res.redirect(303, `${eventPath(eventId)}?done=${action}`);
  });

  // Failure groups, their bulk retry, and its job (./failure-routes.tsx).
  router.use(failureRoutes({ db, jobs, logger }));

  router.use((req, res) => {
    page(res.status(404), <ProblemPage title="Not found" detail={`The console has no page at ${req.path}.`} />);
  });

  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const problem = toProblem(error, 'The console could not answer; see the receiver log.');
    if (problem.status >= 500) logger.error({ path: req.path, error: errorLine(error) }, 'console request failed');
    page(res.status(problem.status), <ProblemPage title={problem.title} detail={problem.detail} />);
  });

  /** Everything the event page shows, each part on its own: Temporal away still shows the stored delivery. */
  async function eventPage(eventId: string, options: { reveal: boolean; notice?: EventPageData['notice'] }): Promise<EventPageData> {
    const listed = await listedEvent(db, eventId);
    let view: EventView | undefined;
    let viewError: string | undefined;
    try {
      view = await withinTime(operations.show(eventId), TEMPORAL_WAIT_MS);
    } catch (error) {
      if (!(error instanceof EventNotFoundError)) viewError = `Temporal could not be asked: ${errorLine(error)}`;
    }
    if (!listed && !view) throw new EventNotFoundError({ eventId: eventId, why: 'neither the body store nor Temporal has it' });
    const stored = listed ? await loadBodyByWorkflowId(db, eventId) : undefined;
    const verification = stored ? await operations.verify(eventId).catch((error: unknown) => ({ error: errorLine(error) })) : undefined;
    return {
      eventId,
      listed,
      view,
      viewError,
      delivery: stored && decodeDelivery(stored, { reveal: options.reveal }),
      verification,
      signals: (view && flowNamed(view.workflowType)?.signals) ?? [],
      audit: await auditOf(db, eventId),
      notice: options.notice,
    };
  }

  return router;
}

/** How long the event page waits for Temporal before it shows the rest without the workflow. */
const TEMPORAL_WAIT_MS = 3000;

/** `work`'s answer, or an error once `ms` have passed without one. */
async function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function text(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The page's filter, checked as the CLI checks its flags. */
function listFilter(query: EventsQuery): ListFilter {
  if (query.status !== undefined && !(LISTED_STATUSES as readonly string[]).includes(query.status))
    throw new OperationRejectedError(`"status" must be one of ${LISTED_STATUSES.join(', ')}.`);
  if (query.via !== undefined && query.via !== 'delivery' && query.via !== 'backfill') throw new OperationRejectedError('"via" must be delivery or backfill.');
  if (query.group !== undefined && !/^[0-9a-f]{16}$/.test(query.group)) throw new OperationRejectedError('"group" must be a failure group fingerprint.');
  return {
    source: query.source,
    type: query.type,
    status: query.status as ListedStatus | undefined,
    tenant: query.tenant,
    errorClass: query.error,
    group: query.group,
    via: query.via,
    since: query.since === undefined ? undefined : pointInTime(query.since, 'since'),
    until: query.until === undefined ? undefined : pointInTime(query.until, 'until'),
  };
}
