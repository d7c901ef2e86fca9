import type { WorkflowExecutionDescription } from '@temporalio/client';
import { OperationRejectedError } from '../errors';
import { WEBHOOK_EVENT_TYPE, WEBHOOK_SOURCE, WEBHOOK_VIA, type EventVia } from '../../contracts';

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
  /** A raw visibility query, ANDed with the other filters. */
  query?: string;
  /** A failure group's fingerprint: its failed events, found in the body store (`EventOperations.list`). */
  group?: string;
}

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
  if (/\b(?:order|group)\s+by\b|--|\/\*|#/i.test(outside)) throw new OperationRejectedError('"query" may be a condition only: no ORDER BY, GROUP BY or comments.');
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

/**
 * An operator's point in time: a duration back from `now` (`30m`, `72h`, `7d`) or an ISO 8601 time.
 * `field` names it in the error (`since`, `until`), which the CLI's flags and `/admin` share.
 */
export function pointInTime(value: string, field: string, now = new Date()): Date {
  const relative = /^(\d+)(m|h|d)$/.exec(value);
  if (relative) {
    const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(relative[1]) * unitMs);
  }
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new OperationRejectedError(`"${field}" must be a duration (30m, 2h, 3d) or an ISO 8601 time, not "${value}".`);
  return time;
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

function literal(value: string, field: string): string {
  if (!/^[\w.:@-]+$/.test(value)) throw new OperationRejectedError(`"${field}" may hold letters, digits and . _ : @ - only.`);
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
    startTime: execution.startTime.toISOString(),
    closeTime: execution.closeTime?.toISOString() ?? null,
  };
}
