import type { Client, WorkflowExecutionDescription, WorkflowExecutionInfo } from '@temporalio/client';
import { OperationRejectedError } from '../core/errors';
import { WEBHOOK_ERROR_CLASS, WEBHOOK_EVENT_TYPE, WEBHOOK_SOURCE, WEBHOOK_TENANT, WEBHOOK_VIA, type EventVia } from '../../contracts';
import { pointInTime } from '../core/duration';

const VIAS: readonly string[] = ['delivery', 'backfill'] satisfies EventVia[];

/**
 * Finding events in Temporal's visibility: the statuses an operator filters on, the filter, and the
 * query it becomes (always limited to event workflows). Errors name the field (`status`, `since`),
 * which the CLI's flags and the `/admin` query parameters share.
 */
export const EVENT_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'terminated', 'timed_out', 'continued_as_new'] as const;
export type EventStatusName = (typeof EVENT_STATUSES)[number];

export interface EventSummary {
  eventId: string;
  runId: string;
  workflowType: string;
  status: EventStatusName;
  source: string | null;
  eventType: string | null;
  /** The tenant its flow names, if any. */
  tenant: string | null;
  /** How it failed (`chargeOrder › CardDeclined`), once it has. */
  errorClass: string | null;
  startTime: string;
  closeTime: string | null;
}

export interface EventFilter {
  source?: string;
  type?: string;
  status?: EventStatusName;
  /** A duration back from now (`2h`, `3d`) or an ISO 8601 time. */
  since?: string;
  /** Started before this: a duration back from now or an ISO 8601 time. */
  until?: string;
  /** How events came: `delivery` or `backfill`. */
  via?: string;
  /** The tenant their flow names: a Stripe Connect account, a Shopify shop, a GitHub App installation. */
  tenant?: string;
  /** The flow that ran: events it handled, and its subscriber runs (`evt_1~notifyOps`). */
  flow?: string;
  /** How they failed: a whole failure class (`chargeOrder › CardDeclined`) or its last part (`CardDeclined`). */
  errorClass?: string;
  /** A raw visibility query, ANDed with the other filters. */
  query?: string;
  /** A failure group's fingerprint: its failed events, found in the body store (`EventOperations.list`). */
  group?: string;
}

/** One field of the event filter: its name, the value its option takes, what it matches, and the values it may take. */
export interface FilterField {
  field: keyof EventFilter;
  /** The option's value as `--help` shows it: `--type <pattern>`. */
  value: string;
  /** What it matches, as the CLI's help and /admin's errors word it. */
  matches: string;
  choices?: readonly string[];
}

/**
 * The event filter, declared once: `events list` and the bulk commands take its options
 * (`--error-class` for `errorClass`), `GET /admin/events` its query parameters, `POST /admin/bulk`
 * its `filter`, the console its form (but `query`, since the console lists from the body store).
 */
export const FILTER: readonly FilterField[] = [
  { field: 'source', value: 'source', matches: 'events of this source' },
  { field: 'type', value: 'pattern', matches: 'events of this type, or a prefix ending in * (checkout.*)' },
  { field: 'status', value: 'status', matches: 'events whose current run has this status', choices: EVENT_STATUSES },
  { field: 'since', value: 'when', matches: 'started since a duration ago (30m, 2h, 3d) or an ISO time' },
  { field: 'until', value: 'when', matches: 'started before a duration ago or an ISO time' },
  { field: 'via', value: 'via', matches: 'events that came this way', choices: ['delivery', 'backfill'] },
  { field: 'tenant', value: 'tenant', matches: 'events of this tenant (a Stripe Connect account, a Shopify shop, a GitHub App installation)' },
  {
    field: 'flow',
    value: 'flow',
    matches: 'runs of this flow: the events it handles, and its subscriber runs (<event>~<flow>) under routes with several flows',
  },
  {
    field: 'errorClass',
    value: 'class',
    matches: 'events that failed this way: a failure class ("chargeOrder › CardDeclined") or its last part (CardDeclined)',
  },
  { field: 'query', value: 'query', matches: 'a raw visibility query, ANDed with the rest' },
  { field: 'group', value: 'fingerprint', matches: "the failed events of one failure group (the console's Failures page shows its fingerprint)" },
];

/** The filter's field names, in its declaration's order. */
export const FILTER_FIELDS: readonly (keyof EventFilter)[] = FILTER.map(({ field }) => field);

/** Event workflows only (they carry WebhookSource), with the filters ANDed. `now` anchors a relative `since`. */
export function visibilityQuery(filter: EventFilter, now: Date = new Date()): string {
  const clauses = [`${WEBHOOK_SOURCE.name} IS NOT NULL`];
  if (filter.source) clauses.push(`${WEBHOOK_SOURCE.name} = '${literal(filter.source, 'source')}'`);
  if (filter.type?.endsWith('*')) {
    const prefix = filter.type.slice(0, -1);
    // `*` alone is every type; `checkout.*` every type that starts so (the routes' and holds' patterns).
    if (prefix !== '') clauses.push(`${WEBHOOK_EVENT_TYPE.name} STARTS_WITH '${literal(prefix, 'type')}'`);
  } else if (filter.type) clauses.push(`${WEBHOOK_EVENT_TYPE.name} = '${literal(filter.type, 'type')}'`);
  if (filter.via) {
    if (!VIAS.includes(filter.via)) throw new OperationRejectedError(`"via" must be one of ${VIAS.join(', ')}.`);
    clauses.push(`${WEBHOOK_VIA.name} = '${filter.via}'`);
  }
  if (filter.tenant) clauses.push(`${WEBHOOK_TENANT.name} = '${literal(filter.tenant, 'tenant')}'`);
  if (filter.flow) clauses.push(`WorkflowType = '${literal(filter.flow, 'flow')}'`);
  if (filter.errorClass) clauses.push(`${WEBHOOK_ERROR_CLASS.name} = '${literal(filter.errorClass, 'errorClass', CLASS_CHARACTERS)}'`);
  if (filter.status) {
    if (!EVENT_STATUSES.includes(filter.status)) throw new OperationRejectedError(`"status" must be one of ${EVENT_STATUSES.join(', ')}.`);
    clauses.push(`ExecutionStatus = '${STATUS_NAMES[filter.status]}'`);
  }
  if (filter.since) clauses.push(`StartTime >= '${pointInTime(filter.since, 'since', now).toISOString()}'`);
  if (filter.until) clauses.push(`StartTime < '${pointInTime(filter.until, 'until', now).toISOString()}'`);
  if (filter.query) clauses.push(`(${contained(filter.query)})`);
  return clauses.join(' AND ');
}

/**
 * A raw query is ANDed with the event-workflow filter inside parentheses, so it must stay inside
 * them: its parentheses balance outside quoted strings, and it has no ORDER BY, GROUP BY or comment
 * that would end the condition early.
 */
function contained(query: string): string {
  let depth = 0;
  let outside = '';
  for (let index = 0; index < query.length; index++) {
    const character = query[index]!;
    if (character === "'" || character === '"' || character === '`') {
      const end = closingQuote(query, index);
      if (end === -1) throw new OperationRejectedError(`"query" has an unterminated ${character} string.`);
      index = end;
      outside += ' ';
      continue;
    }
    if (character === '(') depth++;
    if (character === ')' && --depth < 0) throw new OperationRejectedError('"query" closes a parenthesis it did not open.');
    outside += character;
  }
  if (depth !== 0) throw new OperationRejectedError('"query" leaves a parenthesis open.');
  if (/\b(?:order|group)\s+by\b|--|\/\*|#/i.test(outside))
    throw new OperationRejectedError('"query" may be a condition only: no ORDER BY, GROUP BY or comments.');
  return query;
}

/** The index of the quote that closes the string opened at `start`, skipping backslash escapes. */
function closingQuote(query: string, start: number): number {
  for (let index = start + 1; index < query.length; index++) {
    if (query[index] === '\\') index++;
    else if (query[index] === query[start]) return index;
  }
  return -1;
}

const STATUS_NAMES: Record<EventStatusName, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  continued_as_new: 'ContinuedAsNew',
};

const LITERAL_CHARACTERS = { pattern: /^[\w.:@-]+$/, named: '. _ : @ -' };
/** A failure class joins its steps with ` › `. */
const CLASS_CHARACTERS = { pattern: /^[\w.:@ ›-]+$/, named: '. _ : @ - › and spaces' };

function literal(value: string, field: string, allowed = LITERAL_CHARACTERS): string {
  if (!allowed.pattern.test(value)) throw new OperationRejectedError(`"${field}" may hold letters, digits and ${allowed.named} only.`);
  return value;
}

type Execution = Pick<WorkflowExecutionDescription, 'workflowId' | 'runId' | 'type' | 'status' | 'startTime' | 'closeTime' | 'typedSearchAttributes'>;

/** An execution as the CLI and `/admin` list it. */
export function toSummary(execution: Execution): EventSummary {
  const status = execution.status.name.toLowerCase();
  return {
    eventId: execution.workflowId,
    runId: execution.runId,
    workflowType: execution.type,
    status: (status === 'canceled' ? 'cancelled' : status) as EventStatusName,
    source: execution.typedSearchAttributes.get(WEBHOOK_SOURCE) ?? null,
    eventType: execution.typedSearchAttributes.get(WEBHOOK_EVENT_TYPE) ?? null,
    tenant: execution.typedSearchAttributes.get(WEBHOOK_TENANT) ?? null,
    errorClass: execution.typedSearchAttributes.get(WEBHOOK_ERROR_CLASS)?.[0] ?? null,
    startTime: execution.startTime.toISOString(),
    closeTime: execution.closeTime?.toISOString() ?? null,
  };
}

/** Matches checked for their current run at once. */
const LIST_PAGE = 100;

/**
 * Events whose current run matches the filter. Visibility holds every run, so an event that
 * failed and was reset would otherwise still match `--status failed` through its old run: each
 * page of matches is checked against the newest run of its IDs, found by one more visibility query
 * per page, not a describe per event. A failure group's events (stuck ones included, which have
 * not failed in Temporal) come from `groupMembers`, and are listed by ID a page at a time, with the rest of the filter.
 */
export async function findEvents(
  client: Client,
  { group, ...filter }: EventFilter,
  limit: number,
  options: { now?: Date; groupMembers(group: string, limit: number): Promise<string[]> },
): Promise<EventSummary[]> {
  if (group) {
    const ids = (await options.groupMembers(group, limit)).filter(quotable);
    const events: EventSummary[] = [];
    for (let next = 0; next < ids.length && events.length < limit; next += LIST_PAGE) {
      const byId = workflowIdsIn(ids.slice(next, next + LIST_PAGE));
      events.push(...(await findEvents(client, { ...filter, query: filter.query ? `(${filter.query}) AND ${byId}` : byId }, limit - events.length, options)));
    }
    return events;
  }
  const events: EventSummary[] = [];
  const seen = new Set<string>();
  let page: WorkflowExecutionInfo[] = [];
  const settle = async () => {
    const current = await currentRuns(
      client,
      page.map((execution) => execution.workflowId),
    );
    for (const execution of page) if (events.length < limit && current.get(execution.workflowId) === execution.runId) events.push(toSummary(execution));
    page = [];
  };
  for await (const execution of client.workflow.list({ query: visibilityQuery(filter, options.now) })) {
    if (seen.has(execution.workflowId)) continue;
    seen.add(execution.workflowId);
    page.push(execution);
    if (page.length === LIST_PAGE) await settle();
    if (events.length >= limit) return events;
  }
  if (page.length > 0) await settle();
  return events;
}

/** The newest run of each workflow ID (a reset's, a continue-as-new's): its current one. */
async function currentRuns(client: Client, workflowIds: readonly string[]): Promise<Map<string, string>> {
  const newest = new Map<string, { runId: string; startTime: number }>();
  const listed = workflowIds.filter(quotable);
  if (listed.length > 0) {
    for await (const run of client.workflow.list({ query: workflowIdsIn(listed) })) {
      const seen = newest.get(run.workflowId);
      if (!seen || run.startTime.getTime() > seen.startTime) newest.set(run.workflowId, { runId: run.runId, startTime: run.startTime.getTime() });
    }
  }
  const current = new Map([...newest].map(([id, run]) => [id, run.runId]));
  // An ID a query cannot quote is asked for directly.
  for (const id of workflowIds.filter((id) => !quotable(id))) current.set(id, (await client.workflow.getHandle(id).describe()).runId);
  return current;
}

/** An ID a visibility query can quote: no quote and no backslash in it. */
const quotable = (id: string) => !/['\\]/.test(id);

/** A visibility condition matching these (quotable) workflow IDs. */
const workflowIdsIn = (ids: readonly string[]) => `WorkflowId IN (${ids.map((id) => `'${id}'`).join(', ')})`;
