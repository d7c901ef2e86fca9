import { randomBytes } from 'node:crypto';
import { HoldNotFoundError, OperationRejectedError } from '../core/errors';
import type { Database, Queryable } from './database';

/**
 * Holds and start budgets, kept in PostgreSQL so every receiver and worker obeys the same ones.
 *
 * A hold on a source (all its event types, or a pattern) lets deliveries in as usual (verified,
 * stored, answered 2xx) and starts nothing: their rows wait in the inbox, `held_by` the hold. A
 * release hands them back to the sweepers, paced by a budget when it gives a rate. A budget is a
 * token bucket every sweeper draws from under a row lock, so its rate is the cluster's, not each
 * process's (src/db/inbox.ts `claimPacedStarts`).
 */

export interface Hold {
  id: string;
  source: string;
  /** An event type or a prefix ending in `*`; null holds every type of the source. */
  typePattern: string | null;
  reason: string | null;
  /** Who held it: an admin token's name, or the operator's user name from the CLI. */
  createdBy: string;
  createdAt: string;
  releasedAt: string | null;
  releasedBy: string | null;
  /** The rate its rows were released at, per second; null for at once. */
  releaseRate: number | null;
  /** Rows waiting for it now. */
  held: number;
}

/**
 * SQL: does the event type `type` match the hold pattern `pattern` (null: every type; `prefix*`;
 * or the exact type)? The same rule as a source's routes.
 */
const matches = (type: string, pattern: string) =>
  `(${pattern} IS NULL OR ${pattern} = ${type} OR (right(${pattern}, 1) = '*' AND starts_with(${type}, left(${pattern}, -1))))`;

/** The type of a stored event, from what its start holds. */
const ROW_TYPE = `(start->'input'->>'type')`;

/** SQL: the first active hold of the source `$1` that matches the event type `type`, or null. */
export const matchingHold = (type: string) =>
  `(SELECT id FROM holds WHERE released_at IS NULL AND source = $1 AND ${matches(type, 'type_pattern')} ORDER BY created_at, id LIMIT 1)`;

/** SQL: the standing budget of the source `$1`, or null. */
export const standingBudget = `(SELECT id FROM start_budgets WHERE id = 'source:' || $1)`;

/** The id of a source's standing budget (`rate:` in WEBHOOKS_CONFIG). */
export const sourceBudgetId = (source: string) => `source:${source}`;

/** SQL: the tokens a budget's row holds now, refilled at its rate since it was last drawn from, up to its burst. */
export const AVAILABLE_TOKENS = 'least(burst, tokens + rate * greatest(0, EXTRACT(EPOCH FROM clock_timestamp() - refilled_at)))::float8';

/**
 * How many starts a budget lets through at once after an idle moment: a tenth of a second's worth,
 * at least one. In any one second, at most `rate + burstOf(rate)` start.
 */
export function burstOf(rate: number): number {
  return Math.max(1, Math.ceil(rate / 10));
}

/**
 * Takes one start's token from `budget`, the bucket the sweepers' paced starts draw from too (a
 * source's standing rate): zero wait when it had one, else how long until it will. A budget that
 * does not exist paces nothing. The row is locked for the take, so every process draws from one bucket.
 */
export async function takeStartToken(db: Database, budget: string): Promise<{ waitMs: number }> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ rate: number; available: number; at: Date }>(
      `SELECT rate, ${AVAILABLE_TOKENS} AS available, clock_timestamp() AS at FROM start_budgets WHERE id = $1 FOR UPDATE`,
      [budget],
    );
    const bucket = rows[0];
    if (!bucket) return { waitMs: 0 };
    if (bucket.available < 1) return { waitMs: Math.ceil(((1 - bucket.available) / bucket.rate) * 1000) };
    await tx.query('UPDATE start_budgets SET tokens = $2, refilled_at = $3 WHERE id = $1', [budget, bucket.available - 1, bucket.at]);
    return { waitMs: 0 };
  });
}

/** @throws OperationRejectedError unless `pattern` is an event type or a prefix ending in `*`. */
export function checkTypePattern(pattern: string): string {
  const star = pattern.indexOf('*');
  if (pattern === '' || (star !== -1 && star !== pattern.length - 1))
    throw new OperationRejectedError(`"${pattern}" must be an event type, or a prefix ending in "*" such as "checkout.*".`);
  return pattern;
}

/**
 * Holds `source`'s deliveries of `typePattern` (every type when absent) from now on, and the rows of
 * the inbox that match and have not started yet.
 */
export async function createHold(db: Database, request: { source: string; typePattern?: string; reason?: string; by: string }): Promise<Hold> {
  const id = `hold_${randomBytes(8).toString('hex')}`;
  const pattern = request.typePattern === undefined ? null : checkTypePattern(request.typePattern);
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO holds (id, source, type_pattern, reason, created_by) VALUES ($1, $2, $3, $4, $5)', [
      id,
      request.source,
      pattern,
      request.reason ?? null,
      request.by,
    ]);
    await tx.query(
      `UPDATE event_bodies SET held_by = $1
       WHERE source = $2 AND started_at IS NULL AND held_by IS NULL AND start IS NOT NULL AND ${matches(ROW_TYPE, '$3::text')}`,
      [id, request.source, pattern],
    );
  });
  return (await holdsWhere(db, 'h.id = $1', [id]))[0]!;
}

/** The active holds, oldest first; with `all`, the released ones too (the audit trail). */
export async function listHolds(db: Queryable, options: { all?: boolean } = {}): Promise<Hold[]> {
  return holdsWhere(db, options.all ? 'true' : 'h.released_at IS NULL', []);
}

/**
 * Releases the active holds of `source` (those of exactly `typePattern` when given), or the one hold
 * `id`. Their rows start again, at most `rate` a second across every sweeper when a rate is given
 * (else at the source's standing rate, if it has one), oldest first, tenants taking turns. A row
 * that also matches another active hold moves to it and keeps waiting. `due`: the rows released.
 */
export async function releaseHolds(
  db: Database,
  which: { id: string } | { source: string; typePattern?: string },
  options: { rate?: number; by: string },
): Promise<{ released: Hold[]; budget: string | null; due: number }> {
  if (options.rate !== undefined && !(options.rate > 0)) throw new OperationRejectedError('A release rate must be a positive number of starts per second.');
  const { released: ids, due } = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `UPDATE holds SET released_at = now(), released_by = $4, release_rate = $5
       WHERE released_at IS NULL AND (id = $1 OR (source = $2 AND ($3::text IS NULL OR type_pattern = $3)))
       RETURNING id`,
      'id' in which
        ? [which.id, null, null, options.by, options.rate ?? null]
        : [null, which.source, which.typePattern ?? null, options.by, options.rate ?? null],
    );
    const released = rows.map((row) => row.id).sort();
    if (released.length === 0) return { released, due: 0 };
    const budget = options.rate === undefined ? null : `release:${released[0]}`;
    if (budget) await tx.query('INSERT INTO start_budgets (id, rate, burst) VALUES ($1, $2, $3)', [budget, options.rate, burstOf(options.rate!)]);
    // Each row moves to the next active hold that matches it, or, with none, is due now, paced.
    const { rows: moved } = await tx.query<{ next: string | null }>(
      `WITH moved AS (
         SELECT b.source, b.event_id,
           (SELECT h.id FROM holds h WHERE h.released_at IS NULL AND h.source = b.source AND ${matches(`(b.start->'input'->>'type')`, 'h.type_pattern')} ORDER BY h.created_at, h.id LIMIT 1) AS next
         FROM event_bodies b WHERE b.held_by = ANY($1) AND b.started_at IS NULL)
       UPDATE event_bodies b SET held_by = moved.next,
         start_due_at = CASE WHEN moved.next IS NULL THEN now() ELSE b.start_due_at END,
         paced_by = CASE WHEN moved.next IS NULL THEN COALESCE($2, (SELECT id FROM start_budgets WHERE id = 'source:' || b.source)) ELSE b.paced_by END
       FROM moved WHERE b.source = moved.source AND b.event_id = moved.event_id
       RETURNING moved.next`,
      [released, budget],
    );
    await tx.query(`SELECT pg_notify('durable_webhooks_inbox', '')`);
    return { released, due: moved.filter((row) => row.next === null).length };
  });
  if (ids.length === 0) {
    const what = 'id' in which ? `the hold ${which.id}` : `${which.source}${which.typePattern ? ` (${which.typePattern})` : ''}`;
    throw new HoldNotFoundError(`No active hold on ${what}; durable-webhooks holds lists them.`);
  }
  return { released: await holdsWhere(db, 'h.id = ANY($1)', [ids]), budget: options.rate === undefined ? null : `release:${ids[0]}`, due };
}

/** Held rows by source and event type, the largest first (at most `limit` pairs), for the gauge and `status`. */
export async function heldCounts(db: Queryable, limit = 100): Promise<Array<{ source: string; type: string; count: number }>> {
  const { rows } = await db.query<{ source: string; type: string; count: number }>(
    `SELECT source, ${ROW_TYPE} AS type, count(*)::int AS count FROM event_bodies
     WHERE held_by IS NOT NULL AND started_at IS NULL GROUP BY 1, 2 ORDER BY count DESC, source, type LIMIT $1`,
    [limit],
  );
  return rows;
}

/**
 * Makes the standing budgets match `sources`' `rate` (WEBHOOKS_CONFIG): created or changed for each
 * source with a rate (its tokens kept), removed for each of these sources without one. Receivers
 * call it at start; rows a removed budget paced start unpaced.
 */
export async function syncStandingRates(db: Queryable, sources: ReadonlyArray<{ name: string; rate?: number }>): Promise<void> {
  const paced = sources.filter((source): source is { name: string; rate: number } => source.rate !== undefined);
  for (const source of paced) {
    await db.query(
      `INSERT INTO start_budgets (id, rate, burst) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET rate = EXCLUDED.rate, burst = EXCLUDED.burst WHERE start_budgets.rate <> EXCLUDED.rate`,
      [sourceBudgetId(source.name), source.rate, burstOf(source.rate)],
    );
  }
  const unpaced = sources.filter((source) => source.rate === undefined).map((source) => sourceBudgetId(source.name));
  if (unpaced.length > 0) await db.query('DELETE FROM start_budgets WHERE id = ANY($1)', [unpaced]);
}

async function holdsWhere(db: Queryable, condition: string, params: unknown[]): Promise<Hold[]> {
  const { rows } = await db.query<{
    id: string;
    source: string;
    type_pattern: string | null;
    reason: string | null;
    created_by: string;
    created_at: Date;
    released_at: Date | null;
    released_by: string | null;
    release_rate: number | null;
    held: number;
  }>(
    `SELECT h.*, (SELECT count(*)::int FROM event_bodies b WHERE b.held_by = h.id AND b.started_at IS NULL) AS held
     FROM holds h WHERE ${condition} ORDER BY h.created_at, h.id`,
    params,
  );
  return rows.map((row) => ({
    id: row.id,
    source: row.source,
    typePattern: row.type_pattern,
    reason: row.reason,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    releasedAt: row.released_at && new Date(row.released_at).toISOString(),
    releasedBy: row.released_by,
    releaseRate: row.release_rate,
    held: row.held,
  }));
}
