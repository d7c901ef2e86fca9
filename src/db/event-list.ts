import { OperationRejectedError } from '../core/errors';
import type { Queryable } from './database';

/**
 * Every event the receivers stored, listed from the body store: the console's event list, failure
 * groups and overview. Temporal's visibility knows only what became a workflow; this table also has
 * what was held, ignored, dead-lettered or not started yet, and (copied from the ledger by a
 * trigger) how each one ended and its failure class. Every filter has an index (migration 016).
 */

/** Where an event stands, from the inbox (`waiting` … `ignored`) or the ledger (`started` … `failed`); `stuck` is running with an activity failing attempt after attempt. */
export const LISTED_STATUSES = ['waiting', 'held', 'dead-lettered', 'ignored', 'filtered', 'started', 'running', 'stuck', 'completed', 'failed'] as const;
export type ListedStatus = (typeof LISTED_STATUSES)[number];

/** The filter of the CLI's bulk actions (source, type as a type or `prefix*`, status, since, until, via), with tenant, failure class and group. */
export interface ListFilter {
  source?: string;
  type?: string;
  status?: ListedStatus;
  tenant?: string;
  errorClass?: string;
  /** A failure group's fingerprint (`failureGroups`). */
  group?: string;
  via?: string;
  since?: Date;
  until?: Date;
  /** One event, by its workflow ID. */
  workflowId?: string;
}

export interface ListedEvent {
  source: string;
  eventId: string;
  workflowId: string;
  type: string | null;
  status: ListedStatus;
  tenant: string | null;
  errorClass: string | null;
  via: string;
  size: number;
  receivedAt: Date;
}

/** SQL: the type of a stored event. */
export const EVENT_TYPE = `(start->'input'->>'type')`;

/** SQL: whether a row with a failure class failed or is stuck (running, an activity failing again and again). */
const GROUP_STATE = `CASE WHEN ledger_status = 'failed' THEN 'failed' ELSE 'stuck' END`;

/** SQL: a failure group's fingerprint, a stable hash of its state, source, type and failure class (never the failure's text). */
export const FINGERPRINT = `left(md5(${GROUP_STATE} || chr(31) || source || chr(31) || coalesce(${EVENT_TYPE}, '') || chr(31) || error_class), 16)`;

/** SQL: each status's condition, written as the partial indexes of migration 016 are. */
const STATUS_CONDITION: Record<ListedStatus, string> = {
  waiting: 'started_at IS NULL AND held_by IS NULL AND dead_lettered_at IS NULL',
  held: 'started_at IS NULL AND held_by IS NOT NULL',
  'dead-lettered': 'started_at IS NULL AND dead_lettered_at IS NOT NULL',
  ignored: 'ignored_at IS NOT NULL AND NOT filtered',
  filtered: 'ignored_at IS NOT NULL AND filtered',
  started: 'started_at IS NOT NULL AND ignored_at IS NULL AND ledger_status IS NULL',
  running: "ledger_status = 'processing' AND error_class IS NULL",
  stuck: "ledger_status = 'processing' AND error_class IS NOT NULL",
  completed: "ledger_status = 'completed'",
  failed: "ledger_status = 'failed'",
};

const STATUS = `CASE WHEN ignored_at IS NOT NULL AND filtered THEN 'filtered'
  WHEN ignored_at IS NOT NULL THEN 'ignored'
  WHEN started_at IS NULL AND held_by IS NOT NULL THEN 'held'
  WHEN started_at IS NULL AND dead_lettered_at IS NOT NULL THEN 'dead-lettered'
  WHEN started_at IS NULL THEN 'waiting'
  WHEN ledger_status IS NULL THEN 'started'
  WHEN ledger_status = 'processing' AND error_class IS NOT NULL THEN 'stuck'
  WHEN ledger_status = 'processing' THEN 'running'
  ELSE ledger_status END`;

/** A page of events, newest first, and the cursor of the next page (null on the last). */
export async function listEvents(
  db: Queryable,
  filter: ListFilter,
  page: { after?: string; limit: number },
): Promise<{ events: ListedEvent[]; next: string | null }> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.source) where.push(`source = ${param(filter.source)}`);
  if (filter.type?.endsWith('*')) {
    if (filter.type !== '*') where.push(`starts_with(${EVENT_TYPE}, ${param(filter.type.slice(0, -1))})`);
  } else if (filter.type) where.push(`${EVENT_TYPE} = ${param(filter.type)}`);
  if (filter.status) where.push(STATUS_CONDITION[filter.status]);
  if (filter.tenant) where.push(`tenant = ${param(filter.tenant)}`);
  if (filter.errorClass) where.push(`error_class = ${param(filter.errorClass)}`);
  if (filter.group) where.push(`error_class IS NOT NULL AND ${FINGERPRINT} = ${param(filter.group)}`);
  if (filter.via) where.push(`via = ${param(filter.via)}`);
  if (filter.workflowId) where.push(`workflow_id = ${param(filter.workflowId)}`);
  if (filter.since) where.push(`received_at >= ${param(filter.since)}`);
  if (filter.until) where.push(`received_at < ${param(filter.until)}`);
  if (page.after) {
    const cursor = readCursor(page.after);
    where.push(`(received_at, source, event_id) < (${param(cursor.receivedAt)}, ${param(cursor.source)}, ${param(cursor.eventId)})`);
  }
  const { rows } = await db.query<{
    source: string;
    event_id: string;
    workflow_id: string;
    type: string | null;
    status: ListedStatus;
    tenant: string | null;
    error_class: string | null;
    via: string;
    size: number;
    received_at: Date;
  }>(
    `SELECT source, event_id, workflow_id, ${EVENT_TYPE} AS type, ${STATUS} AS status, tenant, error_class, via, size, received_at
     FROM event_bodies ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY received_at DESC, source DESC, event_id DESC LIMIT ${param(page.limit + 1)}`,
    params,
  );
  const events = rows.slice(0, page.limit).map((row) => ({
    source: row.source,
    eventId: row.event_id,
    workflowId: row.workflow_id,
    type: row.type,
    status: row.status,
    tenant: row.tenant,
    errorClass: row.error_class,
    via: row.via,
    size: row.size,
    receivedAt: row.received_at,
  }));
  const last = events.at(-1);
  return { events, next: rows.length > page.limit && last ? writeCursor(last) : null };
}

/** One stored event's row as the list shows it, by workflow ID (the event ID an operator has). */
export async function listedEvent(db: Queryable, workflowId: string): Promise<ListedEvent | undefined> {
  return (await listEvents(db, { workflowId }, { limit: 1 })).events[0];
}

const writeCursor = (event: Pick<ListedEvent, 'receivedAt' | 'source' | 'eventId'>) =>
  Buffer.from(JSON.stringify([event.receivedAt.toISOString(), event.source, event.eventId])).toString('base64url');

function readCursor(cursor: string): { receivedAt: Date; source: string; eventId: string } {
  try {
    const [receivedAt, source, eventId] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (typeof receivedAt === 'string' && typeof source === 'string' && typeof eventId === 'string' && !Number.isNaN(Date.parse(receivedAt)))
      return { receivedAt: new Date(receivedAt), source, eventId };
  } catch {
    // Answered below: a cursor is only ever one this module wrote.
  }
  throw new OperationRejectedError('"after" is not a cursor this list gave; start again from the first page.');
}

export interface FailureGroup {
  fingerprint: string;
  /** Failed (the workflow ended), or stuck (running, an activity failing attempt after attempt). */
  state: 'failed' | 'stuck';
  source: string;
  type: string | null;
  errorClass: string;
  count: number;
  firstSeen: Date;
  lastSeen: Date;
  /** The newest few event IDs of the group. */
  examples: string[];
}

/** Failed and stuck events grouped by state, source, type and failure class, largest first. */
export async function failureGroups(db: Queryable, options: { limit: number; fingerprint?: string }): Promise<FailureGroup[]> {
  const { rows } = await db.query<{
    fingerprint: string;
    state: 'failed' | 'stuck';
    source: string;
    type: string | null;
    error_class: string;
    count: number;
    first_seen: Date;
    last_seen: Date;
    examples: string[];
  }>(
    `SELECT ${FINGERPRINT} AS fingerprint, ${GROUP_STATE} AS state, source, ${EVENT_TYPE} AS type, error_class, count(*)::int AS count, min(received_at) AS first_seen, max(received_at) AS last_seen,
       (array_agg(workflow_id ORDER BY received_at DESC))[1:3] AS examples
     FROM event_bodies WHERE error_class IS NOT NULL ${options.fingerprint ? `AND ${FINGERPRINT} = $2` : ''}
     GROUP BY ${GROUP_STATE}, source, ${EVENT_TYPE}, error_class ORDER BY count DESC, last_seen DESC LIMIT $1`,
    options.fingerprint ? [options.limit, options.fingerprint] : [options.limit],
  );
  return rows.map((row) => ({
    fingerprint: row.fingerprint,
    state: row.state,
    source: row.source,
    type: row.type,
    errorClass: row.error_class,
    count: row.count,
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
    examples: row.examples,
  }));
}

/** The workflow IDs of a failure group's events, oldest first: what a bulk action on the group acts on. */
export async function failureGroupMembers(db: Queryable, fingerprint: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ workflow_id: string }>(
    `SELECT workflow_id FROM event_bodies WHERE error_class IS NOT NULL AND ${FINGERPRINT} = $1 ORDER BY received_at LIMIT $2`,
    [fingerprint, limit],
  );
  return rows.map((row) => row.workflow_id);
}

/** Events received per minute by source, over the last `minutes`: the overview's chart. */
export async function receivedPerMinute(db: Queryable, minutes: number): Promise<Array<{ source: string; minute: Date; count: number }>> {
  const { rows } = await db.query<{ source: string; minute: Date; count: number }>(
    `SELECT source, date_trunc('minute', received_at) AS minute, count(*)::int AS count FROM event_bodies
     WHERE received_at >= date_trunc('minute', now()) - $1 * interval '1 minute' GROUP BY 1, 2 ORDER BY 2, 1`,
    [minutes],
  );
  return rows;
}

/** Marks a running event stuck: one of its activities keeps failing with this class (src/temporal/stuck-events.ts). */
export async function markStuck(db: Queryable, workflowId: string, errorClass: string): Promise<void> {
  await db.query(`UPDATE event_bodies SET error_class = $2 WHERE workflow_id = $1 AND ledger_status = 'processing' AND error_class IS DISTINCT FROM $2`, [
    workflowId,
    errorClass,
  ]);
}

/** A stuck event's activity succeeded: it is running, not stuck. */
export async function markRecovered(db: Queryable, workflowId: string): Promise<void> {
  await db.query(`UPDATE event_bodies SET error_class = NULL WHERE workflow_id = $1 AND ledger_status = 'processing' AND error_class IS NOT NULL`, [
    workflowId,
  ]);
}
