import type { StartSpec } from './event-bodies';
import type { Queryable } from './database';

/**
 * The body store as an inbox of starts: bodies committed whose workflow Temporal has not confirmed
 * yet. Sweepers (src/inbox/sweeper.ts) claim due rows with `FOR UPDATE SKIP LOCKED`, so replicas
 * never take the same row at once, and hold each for a lease, so a killed replica's rows come due again.
 */

/** A committed body whose workflow is still to be started. */
export interface PendingStart {
  source: string;
  eventId: string;
  workflowId: string;
  via: string;
  start: StartSpec;
  attempts: number;
}

/** The channel sweepers listen on: a start that failed, or a backlog, wakes them before their next poll. */
export const INBOX_CHANNEL = 'durable_webhooks_inbox';

/** Takes up to `limit` due starts, oldest first, and holds them for `leaseMs` (no other sweeper takes them meanwhile). */
export async function claimDueStarts(db: Queryable, limit: number, leaseMs: number): Promise<PendingStart[]> {
  const { rows } = await db.query<{ source: string; event_id: string; workflow_id: string; via: string; start: StartSpec; start_attempts: number }>(
    `UPDATE event_bodies b SET start_due_at = now() + $2 * interval '1 millisecond'
     FROM (SELECT source, event_id FROM event_bodies
           WHERE started_at IS NULL AND start IS NOT NULL AND dead_lettered_at IS NULL AND start_due_at <= now()
           ORDER BY start_due_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
     WHERE b.source = due.source AND b.event_id = due.event_id
     RETURNING b.source, b.event_id, b.workflow_id, b.via, b.start, b.start_attempts`,
    [limit, leaseMs],
  );
  return rows.map((row) => ({ source: row.source, eventId: row.event_id, workflowId: row.workflow_id, via: row.via, start: row.start, attempts: row.start_attempts }));
}

/** Temporal confirmed these starts (or answered that the workflow already exists). */
export async function markStarted(db: Queryable, keys: readonly { source: string; eventId: string }[]): Promise<void> {
  if (keys.length === 0) return;
  await db.query(
    `UPDATE event_bodies SET started_at = now(), start_error = NULL
     WHERE (source, event_id) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND started_at IS NULL`,
    [keys.map((key) => key.source), keys.map((key) => key.eventId)],
  );
}

/**
 * A start that failed: counted, its reason kept, and due again after `delayMs`; or, with
 * `deadLetter`, kept out of the sweepers' way until `retryDeadLetters` takes it back.
 */
export async function deferStart(db: Queryable, key: { source: string; eventId: string }, error: string, delayMs: number, deadLetter = false): Promise<void> {
  await db.query(
    `UPDATE event_bodies SET start_attempts = start_attempts + 1, start_error = $3, start_due_at = now() + $4 * interval '1 millisecond',
       dead_lettered_at = CASE WHEN $5 THEN now() END
     WHERE source = $1 AND event_id = $2 AND started_at IS NULL`,
    [key.source, key.eventId, error.slice(0, 500), delayMs, deadLetter],
  );
}

/**
 * Takes dead-lettered starts back (the one of `key`, or all): due now, attempts counted from zero.
 * Returns the keys taken back.
 */
export async function retryDeadLetters(db: Queryable, key?: { source?: string; eventId: string }): Promise<Array<{ source: string; eventId: string }>> {
  const { rows } = await db.query<{ source: string; event_id: string }>(
    `UPDATE event_bodies SET dead_lettered_at = NULL, start_attempts = 0, start_due_at = now()
     WHERE dead_lettered_at IS NOT NULL AND started_at IS NULL AND ($1::text IS NULL OR event_id = $1) AND ($2::text IS NULL OR source = $2)
     RETURNING source, event_id`,
    [key?.eventId ?? null, key?.source ?? null],
  );
  return rows.map((row) => ({ source: row.source, eventId: row.event_id }));
}

/** Wakes every sweeper that listens (PostgreSQL's LISTEN/NOTIFY). */
export async function wakeSweepers(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify('${INBOX_CHANNEL}', '')`);
}

/**
 * The inbox's backlog: committed bodies not started yet and how long the oldest has waited, and, of
 * those, the dead-lettered ones, which wait for `durable-webhooks inbox retry`.
 */
export interface Backlog {
  count: number;
  oldestSeconds: number | null;
  deadLettered: number;
}

export async function startBacklog(db: Queryable): Promise<Backlog> {
  const { rows } = await db.query<{ count: number; oldest_seconds: number | null; dead_lettered: number }>(
    `SELECT count(*)::int AS count, EXTRACT(EPOCH FROM now() - min(received_at))::float8 AS oldest_seconds,
       count(*) FILTER (WHERE dead_lettered_at IS NOT NULL)::int AS dead_lettered
     FROM event_bodies WHERE started_at IS NULL AND start IS NOT NULL`,
  );
  return { count: rows[0]!.count, oldestSeconds: rows[0]!.oldest_seconds, deadLettered: rows[0]!.dead_lettered };
}
