import type { Queryable } from './database';

/** How long the body store keeps what it stored; null keeps it forever. */
export interface Retention {
  /** A completed (or ignored) event's body and signature headers, from its receipt. @default 30 days */
  bodyMs: number | null;
  /** The row itself, `(source, event ID, hash)`, which makes a redelivery a duplicate. @default 400 days */
  dedupeMs: number | null;
}

/** What one pass removed. */
export interface Purged {
  bodies: number;
  rows: number;
  /** Waits for another event whose deadline passed DEDUPE_RETENTION ago (a reset of their run is long impossible). */
  waiters: number;
}

/**
 * Purges what is older than its retention, in batches, so no statement holds many rows: the bodies
 * of events the ledger records as completed or ignored, or that a route ignored (a failed or running
 * event keeps its body for a reset, and so does one whose subscriber of a route failed or runs), and
 * that no other workflow still has to read (`reader_pending`: an entity's update not applied yet), then the rows of started (or ignored) events. A row not started yet, or dead-lettered, is never removed.
 * Several workers may purge at once: each batch skips the rows another holds.
 */
export async function purgeExpired(
  db: Queryable,
  retention: Retention,
  { batch = 1_000, stopping = () => false }: { batch?: number; stopping?: () => boolean } = {},
): Promise<Purged> {
  const purged = { bodies: 0, rows: 0, waiters: 0 };
  // Once `stopping` says so, no further batch: what is left goes in the next pass.
  if (retention.bodyMs !== null) {
    for (let count = batch; count === batch && !stopping(); purged.bodies += count) {
      count = (await db.query(PURGE_BODIES, [retention.bodyMs, batch])).rows.length;
    }
  }
  if (retention.dedupeMs !== null) {
    for (let count = batch; count === batch && !stopping(); purged.rows += count) {
      count = (await db.query(DELETE_ROWS, [retention.dedupeMs, batch])).rows.length;
    }
    for (let count = batch; count === batch && !stopping(); purged.waiters += count) {
      count = (await db.query(DELETE_WAITERS, [retention.dedupeMs, batch])).rows.length;
    }
  }
  return purged;
}

const PURGE_BODIES = `
  WITH due AS (
    SELECT b.source, b.event_id FROM event_bodies b LEFT JOIN processed_events p USING (source, event_id)
    WHERE b.body IS NOT NULL AND b.received_at < now() - $1 * interval '1 millisecond' AND (p.status IN ('completed', 'ignored') OR b.ignored_at IS NOT NULL) AND NOT b.reader_pending
      -- An event a route's filters took for several flows: each subscriber (<event>~<flow>) reads this body, and one failed or running keeps it.
      AND NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(b.start->'input'->'routes'->'flows') AS routed
        JOIN processed_events s ON s.source = b.source AND s.event_id = b.event_id || '~' || (routed->>'flow')
        WHERE s.status NOT IN ('completed', 'ignored'))
    LIMIT $2 FOR UPDATE OF b SKIP LOCKED
  )
  UPDATE event_bodies b SET body = NULL, signature_headers = '{}', purged_at = now() FROM due
  WHERE b.source = due.source AND b.event_id = due.event_id RETURNING b.event_id`;

const DELETE_ROWS = `
  WITH due AS (
    SELECT source, event_id FROM event_bodies
    WHERE received_at < now() - $1 * interval '1 millisecond' AND started_at IS NOT NULL
    LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  DELETE FROM event_bodies b USING due WHERE b.source = due.source AND b.event_id = due.event_id RETURNING b.event_id`;

/** Marks the event's body as one another workflow still has to read: retention keeps it until `bodyRead`. */
export async function holdBodyForReader(db: Queryable, key: { source: string; eventId: string }): Promise<void> {
  await db.query('UPDATE event_bodies SET reader_pending = true WHERE source = $1 AND event_id = $2', [key.source, key.eventId]);
}

/** The reader `holdBodyForReader` waited for has consumed the body (applied it, or found it not needed). */
export async function bodyRead(db: Queryable, key: { source: string; eventId: string }): Promise<void> {
  await db.query('UPDATE event_bodies SET reader_pending = false WHERE source = $1 AND event_id = $2', [key.source, key.eventId]);
}

const DELETE_WAITERS = `
  WITH due AS (
    SELECT workflow_id, wait FROM waiters WHERE until < now() - $1 * interval '1 millisecond' LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  DELETE FROM waiters w USING due WHERE w.workflow_id = due.workflow_id AND w.wait = due.wait RETURNING w.wait`;
