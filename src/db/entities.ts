import type { Applied, EntityRef, TurnRequest, Version } from '../../contracts';
import type { Queryable, Statement } from './database';

/** The failed event a key waits on: its request for the turn, and the failure. */
export type Parked = TurnRequest & { failure: string };

/**
 * A key as the database keeps it (`entity_keys`): the last event applied, the failed event it waits
 * on, and who holds it: the event running with no entity (its request), or the key's entity.
 */
export interface EntityRecord extends EntityRef {
  last: Applied | null;
  appliedAt: Date | null;
  parked: Parked | null;
  holder: string | null;
  running: TurnRequest | null;
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
  holder: string | null;
  holder_request: TurnRequest | null;
  updated_at: Date;
}

/** What a key's holders keep of it: the last event applied, and the failed event it waits on. */
export interface KeyState {
  last: Applied | null;
  parked: Parked | null;
}

type KeyRow = Pick<Row, 'last_event_id' | 'last_version' | 'parked'>;
const keyState = (row: KeyRow): KeyState => ({
  last: row.last_event_id === null ? null : { eventId: row.last_event_id, version: row.last_version ?? [] },
  parked: row.parked,
});

const toRecord = (row: Row): EntityRecord => ({
  flow: row.flow,
  source: row.source,
  key: row.key,
  ...keyState(row),
  appliedAt: row.applied_at,
  holder: row.holder,
  running: row.holder_request,
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

/** What an event's ask found of its key: what the key's entity starts from, and whether the event now holds the key itself. */
export interface KeyClaim extends KeyState {
  held: boolean;
}

/** Prepared (src/db/database.ts): every keyed event's ask runs it. */
const CLAIM_KEY: Statement = {
  name: 'claim-key',
  text: `WITH marked AS (UPDATE processed_events SET entity_flow = $3, entity_key = $4 WHERE source = $1 AND event_id = $2),
     busy AS (SELECT EXISTS (SELECT 1 FROM processed_events WHERE entity_flow = $3 AND source = $1 AND entity_key = $4
         AND status = 'processing' AND event_id <> $2)
       OR EXISTS (SELECT 1 FROM processed_events WHERE source = $1 AND event_id = $2 AND entity_key IS NOT NULL) AS waits)
     INSERT INTO entity_keys AS k (flow, source, key, holder, holder_request, handoff)
     SELECT $3, $1, $4, CASE WHEN $6::boolean AND NOT waits THEN $5::text END, CASE WHEN $6::boolean AND NOT waits THEN $7::jsonb END,
       NOT ($6::boolean AND NOT waits)
     FROM busy
     ON CONFLICT (flow, source, key) DO UPDATE SET
       holder = CASE WHEN k.holder IS NULL AND k.parked IS NULL AND EXCLUDED.holder IS NOT NULL THEN EXCLUDED.holder ELSE k.holder END,
       holder_request = CASE WHEN k.holder IS NULL AND k.parked IS NULL AND EXCLUDED.holder IS NOT NULL THEN EXCLUDED.holder_request ELSE k.holder_request END,
       handoff = k.handoff OR NOT ((k.holder IS NULL AND k.parked IS NULL AND EXCLUDED.holder IS NOT NULL) OR k.holder IS NOT DISTINCT FROM $5::text)
     RETURNING k.last_event_id, k.last_version, k.parked, k.holder IS NOT DISTINCT FROM $5::text AS held`,
};

/**
 * Marks an event as its flow's, at this key (until it completes, the receiver counts it among the
 * key's events not done), and takes the key for it if the key is free: nobody holds it, no failed
 * event waits, no other of its events is open (one an entity from before still runs), this event
 * never asked before, and the flow's order lets an event run at once (`mayHold`; a coalescing key's events gather in its
 * entity). The event holding the key runs with no entity. Otherwise the key is marked handed off:
 * the event waits in the entity, and the holder hands the key over when it ends. Asked again (a
 * retry, a reset), the holder still holds it, and any other event never takes the key: it may wait
 * in the entity already (its first ask's answer lost with a workflow task the server refused), and
 * would run twice. One round trip, under the key's row lock.
 */
export async function claimKey(db: Queryable, ref: EntityRef, ask: { eventId: string; request: TurnRequest; mayHold: boolean }): Promise<KeyClaim> {
  const { rows } = await db.query<KeyRow & { held: boolean }>(CLAIM_KEY, [
    ref.source,
    ask.eventId,
    ref.flow,
    ref.key,
    ask.request.workflowId,
    ask.mayHold,
    JSON.stringify(ask.request),
  ]);
  return { ...keyState(rows[0]!), held: rows[0]!.held };
}

/** Prepared: every keyed event that held its key itself runs it as it ends. */
const RELEASE_KEY: Statement = {
  name: 'release-key',
  text: `UPDATE entity_keys SET holder = CASE WHEN handoff OR $6::jsonb IS NOT NULL THEN $5 END, holder_request = NULL, handoff = false,
       last_event_id = COALESCE($7, last_event_id), last_version = CASE WHEN $7::text IS NULL THEN last_version ELSE $8::jsonb END,
       applied_at = CASE WHEN $7::text IS NULL THEN applied_at ELSE now() END, parked = COALESCE($6::jsonb, parked), updated_at = now()
     WHERE flow = $1 AND source = $2 AND key = $3 AND holder = $4
     RETURNING holder IS NOT NULL AS to_entity, last_event_id, last_version, parked`,
};

/**
 * The event holding its key ended: records it applied, or the failure the key now waits on, and lets
 * the key go, to the key's entity (`entityId`) when an event waits there or the key is parked, else
 * to nobody. Answers whether the entity holds the key now, or null when this event did not hold it
 * (said before: a repeat).
 */
export async function releaseKey(
  db: Queryable,
  ref: EntityRef,
  release: { holder: string; entityId: string; applied?: Applied; parked?: Parked },
): Promise<({ toEntity: boolean } & KeyState) | null> {
  const { applied = null, parked = null } = release;
  const { rows } = await db.query<KeyRow & { to_entity: boolean }>(RELEASE_KEY, [
    ref.flow,
    ref.source,
    ref.key,
    release.holder,
    release.entityId,
    parked && JSON.stringify(parked),
    applied?.eventId ?? null,
    applied && JSON.stringify(applied.version),
  ]);
  return rows[0] ? { toEntity: rows[0].to_entity, ...keyState(rows[0]) } : null;
}

/** Who holds a key now (an event's workflow ID or its entity's), if anyone. */
export async function keyHolder(db: Queryable, ref: EntityRef): Promise<string | null> {
  const { rows } = await db.query<{ holder: string | null }>('SELECT holder FROM entity_keys WHERE flow = $1 AND source = $2 AND key = $3', [
    ref.flow,
    ref.source,
    ref.key,
  ]);
  return rows[0]?.holder ?? null;
}

/**
 * The key's entity takes the key: when nobody holds it, when it holds it already (handed over), or
 * from a holder whose workflow has ended (`from`). Otherwise the key is marked handed off, so that
 * its holder hands it to the entity when it ends. Answers what the key's holders kept (the entity
 * starts from it: its previous holder may have applied or parked an event), or the event holding it.
 */
export async function takeKey(
  db: Queryable,
  ref: EntityRef,
  take: { entityId: string; from?: string },
): Promise<({ held: true } & KeyState) | { held: false; holder: TurnRequest }> {
  const { rows } = await db.query<KeyRow & { held: boolean; holder_request: TurnRequest }>(
    `INSERT INTO entity_keys AS k (flow, source, key, holder) VALUES ($1, $2, $3, $4)
     ON CONFLICT (flow, source, key) DO UPDATE SET
       holder = CASE WHEN k.holder IS NULL OR k.holder = $4 OR k.holder = COALESCE($5, $4) THEN $4 ELSE k.holder END,
       holder_request = CASE WHEN k.holder IS NULL OR k.holder = $4 OR k.holder = COALESCE($5, $4) THEN NULL ELSE k.holder_request END,
       handoff = NOT (k.holder IS NULL OR k.holder = $4 OR k.holder = COALESCE($5, $4))
     RETURNING k.holder = $4 AS held, k.holder_request, k.last_event_id, k.last_version, k.parked`,
    [ref.flow, ref.source, ref.key, take.entityId, take.from ?? null],
  );
  const row = rows[0]!;
  return row.held ? { held: true, ...keyState(row) } : { held: false, holder: row.holder_request };
}

/**
 * The key's entity, with nothing left to run, lets its key go: the next event to ask holds it
 * itself. The requests its takes handed back have all had their turns, and are forgotten.
 */
export async function freeKey(db: Queryable, ref: EntityRef, entityId: string): Promise<void> {
  const keyRef = [ref.flow, ref.source, ref.key];
  await db.query('UPDATE entity_keys SET holder = NULL, handoff = false WHERE flow = $1 AND source = $2 AND key = $3 AND holder = $4', [...keyRef, entityId]);
  await db.query('DELETE FROM entity_waiting WHERE flow = $1 AND source = $2 AND key = $3 AND taken IS NOT NULL', keyRef);
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
