import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { subscriberEvent, subscriberWorkflowId, type BulkItemResult, type EventFlow, type RouteReplayInput, type RouteReplayProgress } from '../../contracts';
import type { Database, Queryable } from '../db/database';
import { eachStoredEvent, storedEvents, type StoredEvent } from '../db/event-bodies';
import { sourceBudgetId, takeStartToken } from '../db/holds';
import { flowNamed, Router, type Routes } from '../flows';
import { parseStoredBody } from '../providers/body';
import { isUnavailable } from '../temporal/availability';
import { routedFlow, workflowStartOptions } from './start-data';

/** What a replay batch runs on; `waiting` is called while a start waits for its source's budget (the activity heartbeats). */
interface ReplayDeps {
  client: Client;
  db: Database;
  taskQueue: string;
  waiting?: () => void;
}

/**
 * `durable-webhooks routes replay`, one batch: the next stored events of the window, and for each
 * the flow started as its subscriber where the routes send the event there. Each start draws a token
 * from its source's standing rate (`rate:` in WEBHOOKS_CONFIG), the budget live starts, releases and
 * backfills of the source share across the cluster. `done` holds the results an earlier attempt of
 * this batch settled (its heartbeats), which are not started again.
 */
export async function replayRouteBatch(
  deps: ReplayDeps,
  input: Omit<RouteReplayInput, 'rate' | 'by'> & { after: RouteReplayProgress['after']; limit: number },
  done: readonly BulkItemResult[],
  settled: (result: BulkItemResult) => void,
): Promise<{ results: BulkItemResult[]; last: RouteReplayProgress['after'] }> {
  const flow = eventFlow(input.flow);
  const { routers, window } = readInput(input);
  const page = await storedEvents(deps.db, window, input.after, input.limit);
  // The batch's starts go to Temporal at once; each is settled in order, so a retry goes on after the last one in order.
  const outcomes = page.slice(done.length).map((event) =>
    replayOne(deps, routers, event, flow).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    ),
  );
  const results = [...done];
  for (const outcome of outcomes) {
    const settledOne = await outcome;
    if ('error' in settledOne) throw settledOne.error;
    results.push(settledOne.result);
    settled(settledOne.result);
  }
  const last = page.at(-1);
  return { results, last: last ? { source: last.source, eventId: last.eventId } : null };
}

/** Starts the flow as the event's subscriber where the routes send the event to it; else why not. */
async function replayOne(
  { client, db, taskQueue, waiting }: ReplayDeps,
  routers: ReadonlyMap<string, Router>,
  event: StoredEvent,
  flow: EventFlow,
): Promise<BulkItemResult> {
  const result = (outcome: BulkItemResult['outcome'], detail: string) => ({ eventId: event.workflowId, outcome, detail });
  const routed = routedBody(routers, event, flow);
  if (typeof routed === 'string') return result('skipped', routed);
  if (ranOnArrival(event, flow)) return result('skipped', 'ran');
  const route = routedFlow(event.input, flow, routed.body);
  const spec = {
    flow: flow.name,
    input: subscriberEvent(event.input, route),
    summary: route.summary,
    ...(route.tenant !== undefined && { tenant: route.tenant }),
  };
  await sourceToken(db, event.source, waiting);
  try {
    await client.workflow.start(flow.name, workflowStartOptions(subscriberWorkflowId(event.workflowId, flow.name), spec, event.via, taskQueue));
    return result('done', 'started');
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return result('skipped', 'ran');
    // Temporal away: the batch fails and is retried, going on after the last event settled.
    if (isUnavailable(error)) throw error;
    return result('failed', (error as Error).message);
  }
}

/** Waits for a start's token from the source's standing budget (none: no wait), saying so every second it waits. */
async function sourceToken(db: Database, source: string, waiting: (() => void) | undefined): Promise<void> {
  for (;;) {
    const { waitMs } = await takeStartToken(db, sourceBudgetId(source));
    if (waitMs === 0) return;
    waiting?.();
    await sleep(Math.min(waitMs, 1_000));
  }
}

/** What a replay would do, counted without starting anything: `routes replay --dry-run`. */
export interface ReplayPlan {
  /** Stored events of the window read. */
  read: number;
  /** Of them, those today's routes send to the flow. */
  routed: number;
  /** Of those, the ones the flow ran for when they arrived (its own workflow, or its subscriber). */
  ran: number;
  /** Events whose bodies are purged (BODY_RETENTION) or erased: skipped. */
  purged: number;
  /** The first events it would start the flow for. */
  examples: Array<{ eventId: string; source: string; type: string; receivedAt: string }>;
}

export async function replayPlan(db: Queryable, input: Omit<RouteReplayInput, 'rate' | 'by'>, maxExamples = 5): Promise<ReplayPlan> {
  const flow = eventFlow(input.flow);
  const { routers, window } = readInput(input);
  const plan: ReplayPlan = { read: 0, routed: 0, ran: 0, purged: 0, examples: [] };
  for await (const event of eachStoredEvent(db, window)) {
    plan.read++;
    const routed = routedBody(routers, event, flow);
    if (routed === PURGED) plan.purged++;
    if (typeof routed === 'string') continue;
    plan.routed++;
    if (ranOnArrival(event, flow) || event.routed.includes(flow.name)) plan.ran++;
    else if (plan.examples.length < maxExamples)
      plan.examples.push({ eventId: event.workflowId, source: event.source, type: event.type, receivedAt: event.receivedAt.toISOString() });
  }
  return plan;
}

const PURGED = 'body purged';

/** The event flow a replay runs; the CLI checks the name before it starts the job. */
function eventFlow(name: string): EventFlow {
  const flow = flowNamed(name);
  if (!flow || flow.internal) throw new TypeError(`A route replay of "${name}", which is no event flow.`);
  return flow as EventFlow;
}

/** The replay's routers (each source's routes as the job was asked for) and its window as times. */
function readInput(input: Pick<RouteReplayInput, 'sources' | 'window'>) {
  return {
    routers: new Map(input.sources.map((source) => [source.name, new Router(source.kind, (source.routes ?? {}) as Routes)])),
    window: { ...input.window, since: new Date(input.window.since), until: new Date(input.window.until) },
  };
}

/** The event's parsed body when the routes send it to the flow, decided as the intake decides; else why it is skipped. */
function routedBody(routers: ReadonlyMap<string, Router>, event: StoredEvent, flow: EventFlow): { body: unknown } | string {
  if (!event.body) return PURGED;
  const router = routers.get(event.source);
  if (!router) return 'source not configured';
  const body = parseStoredBody(event, event.body);
  const decision = router.decide(event, body);
  const routed = 'flow' in decision ? decision.flow === flow : 'subscribers' in decision && decision.subscribers.includes(flow);
  return routed ? { body } : 'not routed to it';
}

/** True when the event's own workflow was the flow (an ignored event names the default flow and started nothing). */
function ranOnArrival(event: StoredEvent, flow: EventFlow): boolean {
  return event.flow === flow.name && !event.skipped;
}
