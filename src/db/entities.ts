import type { Applied, EntityRef, TurnRequest, Version } from '../../contracts';
import type { Queryable } from './database';

/** The failed event a key waits on: its request for the turn, and the failure. */
export type Parked = TurnRequest & { failure: string };

/** A key as the database keeps it (`entity_keys`): the last event applied, and the failed event it waits on. */
export interface EntityRecord extends EntityRef {
  last: Applied | null;
  appliedAt: Date | null;
  parked: Parked | null;
  updatedAt: Date;
}

interface Row {
  flow: string;
  source: string;
  key: string;
  last_event_id: string | null;
  last_version: Version | null;
  applied_at: Date | null;
  parked: Parked | null;
  updated_at: Date;
}

const toRecord = (row: Row): EntityRecord => ({
  flow: row.flow,
  source: row.source,
  key: row.key,
  last: row.last_event_id === null ? null : { eventId: row.last_event_id, version: row.last_version ?? [] },
  appliedAt: row.applied_at,
  parked: row.parked,
  updatedAt: row.updated_at,
});

/** Records the last event applied to a key (the entity applies one at a time, so the last write is the last applied). */
export async function recordApplied(db: Queryable, ref: EntityRef, applied: Applied): Promise<void> {
  await db.query(
    `INSERT INTO entity_keys (flow, source, key, last_event_id, last_version, applied_at) VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (flow, source, key) DO UPDATE SET last_event_id = EXCLUDED.last_event_id, last_version = EXCLUDED.last_version,
       applied_at = now(), updated_at = now()`,
    [ref.flow, ref.source, ref.key, applied.eventId, JSON.stringify(applied.version)],
  );
}

/** Records the failed event a key waits on, or that it waits on nothing any more (`null`). */
export async function recordParked(db: Queryable, ref: EntityRef, parked: Parked | null): Promise<void> {
  await db.query(
    `INSERT INTO entity_keys (flow, source, key, parked) VALUES ($1, $2, $3, $4)
     ON CONFLICT (flow, source, key) DO UPDATE SET parked = EXCLUDED.parked, updated_at = now()`,
    [ref.flow, ref.source, ref.key, parked === null ? null : JSON.stringify(parked)],
  );
}

/** One key's record, if the database has one. */
export async function entityRecord(db: Queryable, ref: EntityRef): Promise<EntityRecord | null> {
  const { rows } = await db.query<Row>('SELECT * FROM entity_keys WHERE flow = $1 AND source = $2 AND key = $3', [ref.flow, ref.source, ref.key]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Keys, most recently changed first: of one flow, or only the parked ones. */
export async function listEntities(db: Queryable, filter: { flow?: string; parked?: boolean; limit?: number }): Promise<EntityRecord[]> {
  const { rows } = await db.query<Row>(
    `SELECT * FROM entity_keys WHERE ($1::text IS NULL OR flow = $1) AND (NOT $2 OR parked IS NOT NULL)
     ORDER BY updated_at DESC LIMIT $3`,
    [filter.flow ?? null, filter.parked ?? false, filter.limit ?? 100],
  );
  return rows.map(toRecord);
}

/** The sources at which a flow has this key. */
export async function sourcesOfKey(db: Queryable, flow: string, key: string): Promise<string[]> {
  const { rows } = await db.query<{ source: string }>('SELECT source FROM entity_keys WHERE flow = $1 AND key = $2 ORDER BY source', [flow, key]);
  return rows.map((row) => row.source);
}

/** Parked keys, by flow and source, for the receiver's gauge. */
export async function parkedCounts(db: Queryable): Promise<Array<{ flow: string; source: string; count: number }>> {
  const { rows } = await db.query<{ flow: string; source: string; count: string }>(
    'SELECT flow, source, count(*) AS count FROM entity_keys WHERE parked IS NOT NULL GROUP BY flow, source ORDER BY flow, source',
  );
  return rows.map((row) => ({ flow: row.flow, source: row.source, count: Number(row.count) }));
}

/**
 * Marks an event as its flow's, at this key (until it completes, the receiver counts it among the
 * key's events not done), and reads, in the same round trip, what the key's entity starts from (the
 * last event applied, the failed event it waits on) and whether another of its events is not done.
 */
export async function keyEvent(db: Queryable, ref: EntityRef, eventId: string): Promise<{ last: Applied | null; parked: Parked | null; othersOpen: boolean }> {
  const { rows } = await db.query<Pick<Row, 'last_event_id' | 'last_version' | 'parked'> & { others_open: boolean }>(
    `WITH marked AS (UPDATE processed_events SET entity_flow = $3, entity_key = $4 WHERE source = $1 AND event_id = $2)
     SELECT k.last_event_id, k.last_version, k.parked,
       EXISTS (SELECT 1 FROM processed_events WHERE entity_flow = $3 AND source = $1 AND entity_key = $4 AND status = 'processing' AND event_id <> $2) AS others_open
     FROM (SELECT) AS one LEFT JOIN entity_keys k ON k.flow = $3 AND k.source = $1 AND k.key = $4`,
    [ref.source, eventId, ref.flow, ref.key],
  );
  const row = rows[0]!;
  return {
    last: row.last_event_id === null ? null : { eventId: row.last_event_id, version: row.last_version ?? [] },
    parked: row.parked,
    othersOpen: row.others_open,
  };
}

/** The keys with the most events not done yet (waiting for their turn or running), the most first, for the receiver's gauge. */
export async function busiestKeys(db: Queryable, limit = 10): Promise<Array<EntityRef & { count: number }>> {
  const { rows } = await db.query<EntityRef & { count: string }>(
    `SELECT entity_flow AS flow, source, entity_key AS key, count(*) AS count FROM processed_events
     WHERE entity_key IS NOT NULL AND status = 'processing'
     GROUP BY entity_flow, source, entity_key ORDER BY count(*) DESC, entity_flow, source, entity_key LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({ flow: row.flow, source: row.source, key: row.key, count: Number(row.count) }));
}

/** Claims the keys parked since the last look (each on its event, once): the ones to alert. */
export async function claimNewlyParked(db: Queryable): Promise<Array<EntityRef & { parked: Parked }>> {
  const { rows } = await db.query<EntityRef & { parked: Parked }>(
    `WITH claimed AS (
       INSERT INTO alerted_parked_keys (flow, source, key, event_id)
       SELECT flow, source, key, parked->>'eventId' FROM entity_keys WHERE parked IS NOT NULL
       ON CONFLICT DO NOTHING RETURNING flow, source, key)
     SELECT c.flow, c.source, c.key, e.parked FROM claimed c JOIN entity_keys e USING (flow, source, key) ORDER BY c.flow, c.source, c.key`,
  );
  return rows;
}

/** Gives a claim back (its alert could not be sent), so the next look alerts it. */
export async function unclaimParked(db: Queryable, ref: EntityRef, eventId: string): Promise<void> {
  await db.query('DELETE FROM alerted_parked_keys WHERE flow = $1 AND source = $2 AND key = $3 AND event_id = $4', [ref.flow, ref.source, ref.key, eventId]);
}
