import { compareVersions, type EntityRef, type StoredRequests, type TurnRequest } from '../../contracts';
import type { Database, Queryable } from './database';

/**
 * Keeps a serial key's requests beyond what its entity's run carries: one stored before, or handed
 * back by a take, waits again. Answers how many wait.
 */
export async function storeWaiting(db: Queryable, ref: EntityRef, requests: readonly TurnRequest[]): Promise<number> {
  const { rows } = await db.query<{ waiting: string }>(
    `WITH stored AS (
       INSERT INTO entity_waiting (flow, source, key, event_id, request)
       SELECT $1, $2, $3, request->>'eventId', request FROM jsonb_array_elements($4::jsonb) AS request
       ON CONFLICT (flow, source, key, event_id) DO UPDATE SET request = EXCLUDED.request, taken = NULL
       RETURNING event_id
     )
     SELECT (SELECT count(*) FROM stored) + (SELECT count(*) FROM entity_waiting w
       WHERE w.flow = $1 AND w.source = $2 AND w.key = $3 AND w.taken IS NULL AND w.event_id NOT IN (SELECT event_id FROM stored)) AS waiting`,
    [ref.flow, ref.source, ref.key, JSON.stringify(requests)],
  );
  return Number(rows[0]!.waiting);
}

/**
 * Hands the `count` oldest requests of a serial key kept in the database back to its entity, marked
 * with `take`: asked again (the activity retried), the same take answers the same requests. The
 * requests an earlier take handed back are in the entity's history by now, and are forgotten.
 */
export async function takeWaiting(
  db: Database,
  ref: EntityRef,
  { count, take }: { count: number; take: string },
): Promise<{ requests: TurnRequest[]; stored: StoredRequests | null }> {
  return db.transaction(async (tx) => {
    const keyRef = [ref.flow, ref.source, ref.key];
    // One take at a time per key, however the activity is retried.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [JSON.stringify(keyRef)]);
    await tx.query('DELETE FROM entity_waiting WHERE flow = $1 AND source = $2 AND key = $3 AND taken IS NOT NULL AND taken <> $4', [...keyRef, take]);
    const { rows } = await tx.query<{ request: TurnRequest; taken: string | null }>(
      'SELECT request, taken FROM entity_waiting WHERE flow = $1 AND source = $2 AND key = $3',
      keyRef,
    );
    const taken = rows.filter((row) => row.taken === take).map((row) => row.request);
    const left = rows
      .filter((row) => row.taken === null)
      .map((row) => row.request)
      .sort(compareVersions);
    if (taken.length === 0) {
      taken.push(...left.splice(0, count));
      await tx.query('UPDATE entity_waiting SET taken = $4 WHERE flow = $1 AND source = $2 AND key = $3 AND event_id = ANY($5)', [
        ...keyRef,
        take,
        taken.map((request) => request.eventId),
      ]);
    }
    return { requests: taken.sort(compareVersions), stored: left.length === 0 ? null : { count: left.length, oldest: left[0]! } };
  });
}
