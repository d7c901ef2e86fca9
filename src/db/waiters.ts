import type { AwaitedEvent, ProviderKind, WaitingValues } from '../../contracts';
import type { Queryable } from './database';

/**
 * The waiters table (docs/flows.md#wait-for-another-event): each workflow's wait for another event,
 * and the one event that matched it. A waiter is matched once, by whichever looks first: its own
 * registration among the events stored before, or the intake as a new event is stored.
 */

/** One wait of one workflow, as registered. */
export interface Waiter {
  workflowId: string;
  wait: string;
  flow: string;
  source: string;
  type: string;
  /** `<pointer>=<JSON value>`: the stored events it may match carry it in `wait_keys`. */
  waitKey: string;
  match: string;
  fields: Record<string, string>;
  waiting: WaitingValues;
  until: Date;
}

/** A waiter and where it stands. */
export interface WaiterState extends Waiter {
  status: 'waiting' | 'matched' | 'timed_out';
  matched: AwaitedEvent | null;
}

interface WaiterRow {
  workflow_id: string;
  wait: string;
  flow: string;
  source: string;
  type: string;
  wait_key: string;
  match: string;
  fields: Record<string, string>;
  waiting: WaitingValues;
  until: Date;
  status: WaiterState['status'];
  matched: AwaitedEvent | null;
}

const fromRow = (row: WaiterRow): WaiterState => ({
  workflowId: row.workflow_id,
  wait: row.wait,
  flow: row.flow,
  source: row.source,
  type: row.type,
  waitKey: row.wait_key,
  match: row.match,
  fields: row.fields,
  waiting: row.waiting,
  until: row.until,
  status: row.status,
  matched: row.matched,
});

/** Records a wait once: a retried or reset registration finds the row it wrote, and where it stands. */
export async function registerWaiter(db: Queryable, waiter: Waiter): Promise<WaiterState> {
  await db.query(
    `INSERT INTO waiters (workflow_id, wait, flow, source, type, wait_key, match, fields, waiting, until)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (workflow_id, wait) DO NOTHING`,
    [
      waiter.workflowId,
      waiter.wait,
      waiter.flow,
      waiter.source,
      waiter.type,
      waiter.waitKey,
      waiter.match,
      JSON.stringify(waiter.fields),
      JSON.stringify(waiter.waiting),
      waiter.until,
    ],
  );
  return (await waiterOf(db, waiter.workflowId, waiter.wait))!;
}

export async function waiterOf(db: Queryable, workflowId: string, wait: string): Promise<WaiterState | undefined> {
  const { rows } = await db.query<WaiterRow>('SELECT * FROM waiters WHERE workflow_id = $1 AND wait = $2', [workflowId, wait]);
  return rows[0] && fromRow(rows[0]);
}

/** The waiters still waiting, before their time is up, for an event of this source and type with one of these keys. */
export async function openWaiters(db: Queryable, source: string, type: string, keys: readonly string[]): Promise<WaiterState[]> {
  const { rows } = await db.query<WaiterRow>(
    `SELECT * FROM waiters WHERE status = 'waiting' AND source = $1 AND type = $2 AND wait_key = ANY($3) AND until > now() ORDER BY registered_at`,
    [source, type, keys],
  );
  return rows.map(fromRow);
}

/** Gives the waiter this event, if it still waits: true for the one caller that did. `signalled`: the workflow has it already (its registration found it). */
export async function matchWaiter(
  db: Queryable,
  waiter: Pick<Waiter, 'workflowId' | 'wait'>,
  event: AwaitedEvent,
  { signalled }: { signalled: boolean },
): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE waiters SET status = 'matched', matched = $3, matched_at = now(), signalled_at = CASE WHEN $4 THEN now() END
     WHERE workflow_id = $1 AND wait = $2 AND status = 'waiting' RETURNING 1`,
    [waiter.workflowId, waiter.wait, JSON.stringify(event), signalled],
  );
  return rows.length === 1;
}

/** Its time is up: stops the waiter unless an event matched it first; where it stands then. */
export async function closeWaiter(db: Queryable, workflowId: string, wait: string): Promise<WaiterState | undefined> {
  await db.query(`UPDATE waiters SET status = 'timed_out' WHERE workflow_id = $1 AND wait = $2 AND status = 'waiting'`, [workflowId, wait]);
  return waiterOf(db, workflowId, wait);
}

/** Temporal took the waiter's signal (or the workflow is gone): nobody sends it again. */
export async function markSignalled(db: Queryable, workflowId: string, wait: string): Promise<void> {
  await db.query('UPDATE waiters SET signalled_at = now() WHERE workflow_id = $1 AND wait = $2', [workflowId, wait]);
}

/** Matched waiters whose signal Temporal has not taken, matched at least `olderThanMs` ago (the matching process's own try comes first). */
export async function unsignalledWaiters(db: Queryable, olderThanMs: number, limit: number): Promise<WaiterState[]> {
  const { rows } = await db.query<WaiterRow>(
    `SELECT * FROM waiters WHERE status = 'matched' AND signalled_at IS NULL AND matched_at < now() - $1 * interval '1 millisecond' ORDER BY matched_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map(fromRow);
}

/** A stored event a waiter may match, parsed by the caller. */
export interface Candidate {
  source: string;
  eventId: string;
  type: string;
  provider: ProviderKind;
  receivedAt: Date;
  /** What waits find it by (see `Waiter.waitKey`); null when no wait did when it was stored. */
  waitKeys: string[] | null;
  contentType: string | null;
  body: Buffer | null;
}

interface CandidateRow {
  source: string;
  event_id: string;
  type: string;
  provider: ProviderKind;
  received_at: Date;
  wait_keys: string[] | null;
  content_type: string | null;
  body: Buffer | null;
}

const CANDIDATE = `SELECT source, event_id, start->'input'->>'type' AS type, provider, received_at, wait_keys, content_type, body FROM event_bodies`;

const candidate = (row: CandidateRow): Candidate => ({
  source: row.source,
  eventId: row.event_id,
  type: row.type,
  provider: row.provider,
  receivedAt: row.received_at,
  waitKeys: row.wait_keys,
  contentType: row.content_type,
  body: row.body,
});

/** The stored events of a source and type that carry the key, oldest first: what a new waiter looks through (a held event matches nothing until its release). */
export async function storedCandidates(db: Queryable, source: string, type: string, waitKey: string): Promise<Candidate[]> {
  const { rows } = await db.query<CandidateRow>(
    `${CANDIDATE} WHERE source = $1 AND wait_keys @> ARRAY[$3] AND held_by IS NULL AND start->'input'->>'type' = $2 AND body IS NOT NULL ORDER BY received_at, event_id`,
    [source, type, waitKey],
  );
  return rows.map(candidate);
}

/** One stored event, if it has keys and was not matched against the waiters yet. */
export async function unmatchedArrival(db: Queryable, source: string, eventId: string): Promise<Candidate | undefined> {
  const { rows } = await db.query<CandidateRow>(
    `${CANDIDATE} WHERE source = $1 AND event_id = $2 AND wait_keys IS NOT NULL AND waits_matched_at IS NULL AND held_by IS NULL`,
    [source, eventId],
  );
  return rows[0] && candidate(rows[0]);
}

/** Stored events with keys not matched against the waiters, stored at least `olderThanMs` ago: the storing process's own try comes first. */
export async function unmatchedArrivals(db: Queryable, olderThanMs: number, limit: number): Promise<Array<{ source: string; eventId: string }>> {
  const { rows } = await db.query<{ source: string; event_id: string }>(
    `SELECT source, event_id FROM event_bodies WHERE wait_keys IS NOT NULL AND waits_matched_at IS NULL AND held_by IS NULL AND received_at < now() - $1 * interval '1 millisecond'
     ORDER BY received_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map((row) => ({ source: row.source, eventId: row.event_id }));
}

export async function markArrivalMatched(db: Queryable, source: string, eventId: string): Promise<void> {
  await db.query('UPDATE event_bodies SET waits_matched_at = now() WHERE source = $1 AND event_id = $2', [source, eventId]);
}

/** When the last pass over the stored events of this type for these fields began (`fields`: their pointers, sorted, space-separated); null before the first. */
export async function waitIndexedAt(db: Queryable, type: string, fields: string): Promise<Date | null> {
  const { rows } = await db.query<{ indexed_at: Date }>('SELECT indexed_at FROM wait_indexes WHERE type = $1 AND fields = $2', [type, fields]);
  return rows[0]?.indexed_at ?? null;
}

/** A pass that began at `at` is done: the next one reads from a little before it. */
export async function markWaitIndexed(db: Queryable, type: string, fields: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO wait_indexes (type, fields, indexed_at) VALUES ($1, $2, $3)
     ON CONFLICT (type, fields) DO UPDATE SET indexed_at = greatest(wait_indexes.indexed_at, EXCLUDED.indexed_at)`,
    [type, fields, at],
  );
}

/** Stored events of a type with their bodies, after `after` in (received_at, source, event ID) order, `limit` at a time. */
export async function storedOfType(
  db: Queryable,
  type: string,
  after: { receivedAt: Date; source: string; eventId: string } | null,
  limit: number,
): Promise<Array<Candidate & { waitKeys: string[] | null }>> {
  const { rows } = await db.query<CandidateRow>(
    `${CANDIDATE} WHERE start->'input'->>'type' = $1 AND body IS NOT NULL
       AND ($2::timestamptz IS NULL OR (received_at, source, event_id) > ($2, $3, $4))
     ORDER BY received_at, source, event_id LIMIT $5`,
    [type, after?.receivedAt ?? null, after?.source ?? null, after?.eventId ?? null, limit],
  );
  return rows.map(candidate);
}

/**
 * Gives a stored event the keys its waits find it by, when they differ from those it has; it is then
 * matched again against the open waiters (by a sweeper). True when they differed.
 */
export async function setWaitKeys(db: Queryable, source: string, eventId: string, keys: string[] | null): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE event_bodies SET wait_keys = $3, waits_matched_at = NULL WHERE source = $1 AND event_id = $2 AND wait_keys IS DISTINCT FROM $3 RETURNING 1`,
    [source, eventId, keys],
  );
  return rows.length === 1;
}
