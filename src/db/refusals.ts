import type { Queryable } from './database';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';

/**
 * Deliveries refused before they were recorded (bad signature, stale timestamp, unknown source, too
 * large, replay, …), kept for the console so an operator can see why a provider's webhooks fail.
 *
 * Anyone can make a refusal without a secret, so nothing about it is unbounded: no body is kept
 * (only header names, never values), a receiver writes them in batches from a buffer that drops
 * what does not fit (counted), and the table keeps at most `maxRows` rows for at most `retentionMs`.
 */

export interface Refusal {
  refusedAt: Date;
  source: string;
  path: string;
  status: number;
  /** The problem's slug: `invalid-signature` (a stale timestamp too), `unknown-source`, `payload-too-large`, `replay` (answered 200), … */
  reason: string;
  /** The problem's detail: names identifiers only (a header, a limit), never the payload. */
  detail: string;
  client: string | undefined;
  headerNames: string[];
}

export interface RefusalLimits {
  /** Rows the table keeps; the oldest go first. */
  maxRows: number;
  /**
   * Rows one client address keeps, and (in the same proportion of `maxBuffered`) refusals it may add
   * to one receiver's buffer per write: one sender with no secret cannot push everyone else's out.
   */
  maxRowsPerAddress: number;
  retentionMs: number;
  /** Refusals one receiver holds between two writes; more are dropped and counted. */
  maxBuffered: number;
  /** How often a receiver writes its buffer. */
  flushMs: number;
}

export const DEFAULT_REFUSAL_LIMITS: RefusalLimits = {
  maxRows: 10_000,
  maxRowsPerAddress: 1_000,
  retentionMs: 7 * 24 * 3600_000,
  maxBuffered: 500,
  flushMs: 1000,
};

/** Longest detail, path and header list kept per refusal. */
const MAX_TEXT = 300;
const MAX_HEADER_NAMES = 40;

/** A receiver's refusals, buffered and written in batches; `record` never waits or throws. */
export class RefusalLog {
  private buffer: Refusal[] = [];
  private bufferedByAddress = new Map<string, number>();
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly limits: RefusalLimits = DEFAULT_REFUSAL_LIMITS,
  ) {}

  record(refusal: Refusal): void {
    const address = refusal.client ?? '';
    const fromAddress = this.bufferedByAddress.get(address) ?? 0;
    const { maxBuffered, maxRows, maxRowsPerAddress } = this.limits;
    if (this.buffer.length >= maxBuffered || fromAddress >= Math.ceil((maxBuffered * maxRowsPerAddress) / maxRows)) {
      this.dropped += 1;
      return;
    }
    this.bufferedByAddress.set(address, fromAddress + 1);
    this.buffer.push({
      ...refusal,
      path: refusal.path.slice(0, MAX_TEXT),
      detail: refusal.detail.slice(0, MAX_TEXT),
      headerNames: refusal.headerNames.slice(0, MAX_HEADER_NAMES).map((name) => name.slice(0, 100)),
    });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.flush());
    }, this.limits.flushMs).unref();
  }

  /** Writes what is buffered, then trims the table to its cap and retention. */
  async flush(): Promise<void> {
    const batch = this.buffer;
    const dropped = this.dropped;
    this.buffer = [];
    this.bufferedByAddress = new Map();
    this.dropped = 0;
    if (dropped > 0) this.logger.warn({ dropped }, 'refused deliveries not kept: more arrived within a second than the console keeps');
    if (batch.length === 0) return;
    try {
      await this.db.query(
        `INSERT INTO refused_deliveries (refused_at, source, path, status, reason, detail, client, header_names)
         SELECT (r->>'refusedAt')::timestamptz, r->>'source', r->>'path', (r->>'status')::int, r->>'reason', r->>'detail', r->>'client',
           ARRAY(SELECT jsonb_array_elements_text(r->'headerNames'))
         FROM jsonb_array_elements($1::jsonb) r`,
        [JSON.stringify(batch)],
      );
      await trimRefusals(this.db, this.limits);
    } catch (error) {
      this.logger.warn({ error: errorLine(error), refusals: batch.length }, 'refused deliveries not kept: the database did not answer');
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    await this.flush();
  }
}

/**
 * Deletes refusals past the retention, then each address's oldest past its share, then the oldest
 * past the row cap: what a flood from one address pushes out is its own.
 */
export async function trimRefusals(db: Queryable, limits: Pick<RefusalLimits, 'maxRows' | 'maxRowsPerAddress' | 'retentionMs'>): Promise<void> {
  await db.query(
    `DELETE FROM refused_deliveries WHERE refused_at < now() - $1 * interval '1 millisecond'
       OR id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY client ORDER BY id DESC) AS newer FROM refused_deliveries) ranked WHERE newer > $2)`,
    [limits.retentionMs, limits.maxRowsPerAddress],
  );
  await db.query(`DELETE FROM refused_deliveries WHERE id <= (SELECT id FROM refused_deliveries ORDER BY id DESC OFFSET $1 LIMIT 1)`, [limits.maxRows]);
}

export interface RefusalRow extends Refusal {
  id: string;
}

/** The newest refusals first, optionally of one source or reason; `before` pages by id. */
export async function listRefusals(db: Queryable, filter: { source?: string; reason?: string; before?: string; limit: number }): Promise<RefusalRow[]> {
  const { rows } = await db.query<{
    id: string;
    refused_at: Date;
    source: string;
    path: string;
    status: number;
    reason: string;
    detail: string | null;
    client: string | null;
    header_names: string[];
  }>(
    `SELECT id::text, refused_at, source, path, status, reason, detail, client, header_names FROM refused_deliveries
     WHERE ($1::text IS NULL OR source = $1) AND ($2::text IS NULL OR reason = $2) AND ($3::bigint IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [filter.source ?? null, filter.reason ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map((row) => ({
    id: row.id,
    refusedAt: row.refused_at,
    source: row.source,
    path: row.path,
    status: row.status,
    reason: row.reason,
    detail: row.detail ?? '',
    client: row.client ?? undefined,
    headerNames: row.header_names,
  }));
}

/** Refusals by source and reason over the last `sinceMs`. */
export async function refusalCounts(db: Queryable, sinceMs: number): Promise<Array<{ source: string; reason: string; count: number }>> {
  const { rows } = await db.query<{ source: string; reason: string; count: number }>(
    `SELECT source, reason, count(*)::int AS count FROM refused_deliveries WHERE refused_at >= now() - $1 * interval '1 millisecond'
     GROUP BY source, reason ORDER BY count DESC, source, reason`,
    [sinceMs],
  );
  return rows;
}
