import express from 'express';
import { pointInTime } from '../../core/duration';
import { OperationRejectedError } from '../../core/errors';
import { unroutedTypes } from '../../db/event-bodies';
import { failureGroups, LISTED_STATUSES, listEvents, receivedPerMinute, type ListedStatus, type ListFilter } from '../../db/event-list';
import { startBacklog } from '../../db/inbox';
import { listRefusals, refusalCounts } from '../../db/refusals';
import { flowsMatched } from '../../db/route-counts';
import { DEFAULT_FLOW, ROUTE_FLOW } from '../../flows';
import { receivedChart } from './charts';
import { CONSOLE_FILTER_FIELDS, EventsPage, type EventsQuery } from './pages/events';
import { OverviewPage } from './pages/overview';
import { RefusedPage } from './pages/refused';
import { text } from './query';
import { page } from './render';
import type { ConsoleDeps } from './deps';
import { sessionOf } from './session';

/** Rows a list page shows. */
const PAGE = 50;

/** The console's overview, its chart's data, the refused deliveries and the event list. Behind the console's sessions. */
export function overviewRoutes(deps: ConsoleDeps): express.Router {
  const { db } = deps;
  const router = express.Router();

  router.get('/', async (_req, res) => {
    const [backlog, refusals, groups, unrouted, matched] = await Promise.all([
      startBacklog(db),
      refusalCounts(db, 3600_000),
      failureGroups(db, { limit: 5 }),
      unroutedTypes(db, DEFAULT_FLOW.name, 3600_000, 20),
      deps.routes.length > 0 ? flowsMatched(db, ROUTE_FLOW.name, 3600_000) : [],
    ]);
    const routes = deps.routes.map((route) => ({ ...route, took: matched.find((row) => row.source === route.source && row.flow === route.flow)?.events ?? 0 }));
    const secretUse = (await deps.secretUse?.()) ?? [];
    page(res, <OverviewPage session={sessionOf(res)} data={{ backlog, refusals, groups, unrouted, routes, secretUse }} />);
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
    const query: EventsQuery = Object.fromEntries(CONSOLE_FILTER_FIELDS.map((name) => [name, text(req, name)]).filter(([, value]) => value !== undefined));
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
  return router;
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
    errorClass: query.errorClass,
    group: query.group,
    via: query.via,
    since: query.since === undefined ? undefined : pointInTime(query.since, 'since'),
    until: query.until === undefined ? undefined : pointInTime(query.until, 'until'),
  };
}
