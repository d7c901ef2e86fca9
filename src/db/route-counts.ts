import type { Queryable } from './database';

/**
 * How many events each flow took at each source over the last `windowMs`, from the body store: the
 * events started as that flow, and those a route's filters took for it (`routeEvent`'s input names
 * them; `routeFlow`, its workflow type). An ignored or filtered event is no flow's.
 */
export async function flowsMatched(db: Queryable, routeFlow: string, windowMs: number): Promise<Array<{ source: string; flow: string; events: number }>> {
  const { rows } = await db.query<{ source: string; flow: string; events: string }>(
    `SELECT source, flow, count(*) AS events FROM (
       SELECT source, start->>'flow' AS flow FROM event_bodies
        WHERE received_at > now() - $1 * interval '1 millisecond' AND ignored_at IS NULL AND start->>'flow' <> $2
       UNION ALL
       SELECT source, routed->>'flow' FROM event_bodies, jsonb_array_elements(start->'input'->'routes'->'flows') AS routed
        WHERE received_at > now() - $1 * interval '1 millisecond' AND start->>'flow' = $2
     ) matched GROUP BY source, flow ORDER BY source, flow`,
    [windowMs, routeFlow],
  );
  return rows.map((row) => ({ source: row.source, flow: row.flow, events: Number(row.events) }));
}
