import type { StartSpec } from './event-bodies';
import type { Database, Queryable, Statement } from './database';
import { AVAILABLE_TOKENS } from './holds';

/**
 * The body store as an inbox of starts: bodies committed whose workflow Temporal has not confirmed
 * yet. Sweepers (src/intake/sweeper.ts) claim due rows with `FOR UPDATE SKIP LOCKED`, so replicas
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

type PendingRow = { source: string; event_id: string; workflow_id: string; via: string; start: StartSpec; start_attempts: number };
const PENDING_COLUMNS = 'b.source, b.event_id, b.workflow_id, b.via, b.start, b.start_attempts';
const toPending = (row: PendingRow): PendingStart => ({
  source: row.source,
  eventId: row.event_id,
  workflowId: row.workflow_id,
  via: row.via,
  start: row.start,
  attempts: row.start_attempts,
});

/**
 * Takes up to `limit` due starts, oldest first, and holds them for `leaseMs` (no other sweeper takes
 * them meanwhile). Held rows wait for their release, and rows paced by a budget for `claimPacedStarts`.
 */
export async function claimDueStarts(db: Queryable, limit: number, leaseMs: number): Promise<PendingStart[]> {
  const { rows } = await db.query<PendingRow>(
    `UPDATE event_bodies b SET start_due_at = now() + $2 * interval '1 millisecond'
     FROM (SELECT source, event_id FROM event_bodies e
           WHERE started_at IS NULL AND start IS NOT NULL AND dead_lettered_at IS NULL AND start_due_at <= now() AND held_by IS NULL
             AND (paced_by IS NULL OR NOT EXISTS (SELECT 1 FROM start_budgets s WHERE s.id = e.paced_by))
           ORDER BY start_due_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
     WHERE b.source = due.source AND b.event_id = due.event_id
     RETURNING ${PENDING_COLUMNS}`,
    [limit, leaseMs],
  );
  return rows.map(toPending);
}

/** The budgets rows may be paced by: a release's, or a source's standing rate. */
export async function startBudgets(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM start_budgets ORDER BY id');
  return rows.map((row) => row.id);
}

/**
 * Takes up to `limit` due starts paced by `budget`, as many as its tokens allow, and holds them for
 * `leaseMs`. Tenants take turns (each one's oldest first, then each one's second, …), so one
 * tenant's thousands never delay another's few; one tenant's own start in arrival order. The budget's
 * row is locked for the claim, so every sweeper of the cluster draws from one bucket; one locked by
 * another sweeper is skipped. `waitMs`: when enough tokens for the next claim will be there; null
 * when nothing is due. A release's budget whose rows have all started is removed.
 */
export async function claimPacedStarts(
  db: Database,
  budget: string,
  limit: number,
  leaseMs: number,
): Promise<{ claimed: PendingStart[]; waitMs: number | null }> {
  return db.transaction(async (tx) => {
    const { rows: buckets } = await tx.query<{ rate: number; burst: number; available: number; at: Date }>(
      `SELECT rate, burst, ${AVAILABLE_TOKENS} AS available, clock_timestamp() AS at FROM start_budgets WHERE id = $1 FOR UPDATE SKIP LOCKED`,
      [budget],
    );
    const bucket = buckets[0];
    if (!bucket) return { claimed: [], waitMs: null };
    // Claims of a burst's size (or a batch's): one claim per tenth of a second at most, however high the rate.
    const wanted = Math.min(bucket.burst, limit);
    if (bucket.available < wanted) {
      const due = await tx.query('SELECT 1 FROM event_bodies WHERE paced_by = $1 AND started_at IS NULL AND held_by IS NULL LIMIT 1', [budget]);
      return { claimed: [], waitMs: due.rows.length > 0 ? Math.ceil(((wanted - bucket.available) / bucket.rate) * 1000) : null };
    }
    const { rows } = await tx.query<PendingRow>(
      `WITH ranked AS (
         SELECT source, event_id, received_at, row_number() OVER (PARTITION BY tenant ORDER BY received_at, event_id) AS turn
         FROM event_bodies
         WHERE paced_by = $1 AND started_at IS NULL AND held_by IS NULL AND dead_lettered_at IS NULL AND start_due_at <= now()),
       picked AS (
         SELECT e.source, e.event_id, r.turn, r.received_at
         FROM event_bodies e JOIN (SELECT * FROM ranked ORDER BY turn, received_at, event_id LIMIT $2) r ON e.source = r.source AND e.event_id = r.event_id
         FOR UPDATE OF e SKIP LOCKED),
       claimed AS (
         UPDATE event_bodies b SET start_due_at = now() + $3 * interval '1 millisecond'
         FROM picked WHERE b.source = picked.source AND b.event_id = picked.event_id
         RETURNING ${PENDING_COLUMNS}, picked.turn, picked.received_at AS arrived)
       SELECT * FROM claimed ORDER BY turn, arrived, event_id`,
      [budget, Math.min(limit, Math.floor(bucket.available)), leaseMs],
    );
    if (rows.length > 0) {
      await tx.query('UPDATE start_budgets SET tokens = $2, refilled_at = $3 WHERE id = $1', [budget, bucket.available - rows.length, bucket.at]);
      return { claimed: rows.map(toPending), waitMs: 0 };
    }
    const waiting = await tx.query<{ due_in_ms: number | null }>(
      `SELECT (EXTRACT(EPOCH FROM min(start_due_at) - now()) * 1000)::float8 AS due_in_ms FROM event_bodies WHERE paced_by = $1 AND started_at IS NULL AND held_by IS NULL AND dead_lettered_at IS NULL`,
      [budget],
    );
    const dueInMs = waiting.rows[0]?.due_in_ms ?? null;
    if (dueInMs === null && budget.startsWith('release:')) await tx.query('DELETE FROM start_budgets WHERE id = $1', [budget]);
    return { claimed: [], waitMs: dueInMs === null ? null : Math.max(0, Math.ceil(dueInMs)) };
  });
}

/**
 * Temporal confirmed these starts (or answered that the workflow already exists). A mark is a hint,
 * so its commit does not wait for the disk (`synchronous_commit` off for its own transaction, by
 * `set_config` in the statement): a mark a crash loses leaves the row unstarted, and a sweeper takes
 * it after its lease, finds the workflow, and marks it then, as when the mark fails. The body's
 * insert before the start still waits for its flush: each delivery waits for one flush, not two.
 * The setting holds for the whole transaction: mark on the database, not in a transaction whose
 * other writes must wait for the flush.
 */
export async function markStarted(db: Queryable, keys: readonly { source: string; eventId: string }[]): Promise<void> {
  if (keys.length === 0) return;
  if (keys.length === 1) await db.query(MARK_ONE_STARTED, [keys[0]!.source, keys[0]!.eventId]);
  else await db.query(MARK_STARTED, [keys.map((key) => key.source), keys.map((key) => key.eventId)]);
}

/** Makes the statement's own transaction commit without waiting for the WAL's flush. */
const WITHOUT_FLUSH = "(SELECT set_config('synchronous_commit', 'off', true)) AS without_flush";

/**
 * Prepared: every delivery that `ACKNOWLEDGE=temporal` started runs it before its answer. One row by
 * its key, not the sweepers' arrays below: prepared, the form over arrays was still planned for 351
 * of 478 deliveries (0.3 ms of PostgreSQL's CPU each, `pg_stat_statements` in
 * test/integration/entities.test.ts), this one for 70, the first five on each connection.
 */
const MARK_ONE_STARTED: Statement = {
  name: 'mark-started',
  text: `UPDATE event_bodies SET started_at = now(), start_error = NULL FROM ${WITHOUT_FLUSH}
    WHERE source = $1 AND event_id = $2 AND started_at IS NULL`,
};

/** A sweeper's batch. */
const MARK_STARTED = `UPDATE event_bodies SET started_at = now(), start_error = NULL FROM ${WITHOUT_FLUSH}
  WHERE (source, event_id) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND started_at IS NULL`;

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
  /** Of `count`, those waiting for an operator's hold to be released. */
  held: number;
}

export async function startBacklog(db: Queryable): Promise<Backlog> {
  const { rows } = await db.query<{ count: number; oldest_seconds: number | null; dead_lettered: number; held: number }>(
    `SELECT count(*)::int AS count, EXTRACT(EPOCH FROM now() - min(received_at))::float8 AS oldest_seconds,
       count(*) FILTER (WHERE dead_lettered_at IS NOT NULL)::int AS dead_lettered, count(*) FILTER (WHERE held_by IS NOT NULL)::int AS held
     FROM event_bodies WHERE started_at IS NULL AND start IS NOT NULL`,
  );
  return { count: rows[0]!.count, oldestSeconds: rows[0]!.oldest_seconds, deadLettered: rows[0]!.dead_lettered, held: rows[0]!.held };
}
