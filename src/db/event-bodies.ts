import { createHash } from 'node:crypto';
import type { EventVia, ProviderKind, WebhookEvent } from '../../contracts';
import type { Queryable, Statement } from './database';
import { matchingHold, standingBudget } from './holds';

/** An event's body as it arrived: the raw bytes and the headers its signature needs. */
export interface ReceivedBody {
  raw: Buffer;
  contentType: string | undefined;
  /** The signature headers (lower-case names); empty for events listed from a provider's API. */
  signatureHeaders: Record<string, string>;
}

/** One row of the body store. `body` is null once the event was erased, or purged after BODY_RETENTION. */
export interface StoredBody {
  source: string;
  eventId: string;
  workflowId: string;
  provider: ProviderKind;
  via: EventVia;
  contentType: string | null;
  signatureHeaders: Record<string, string>;
  body: Buffer | null;
  size: number;
  sha256: string;
  receivedAt: Date;
  erasedAt: Date | null;
  purgedAt: Date | null;
}

/** Why nothing starts for a stored event: a route says `ignore`, or no filter of its route took it (`filtered`). */
export type Skipped = 'ignored' | 'filtered';

/** What to start for a stored body: the flow its source routes it to, the workflow's input, and its summary. */
export interface StartSpec {
  flow: string;
  input: WebhookEvent;
  summary: string;
  /** Whose event it is (the flow's tenant field): drains take turns by tenant, and Temporal's fairness key is it. */
  tenant?: string;
}

/**
 * What storing found: the body is new (and its start is due after the lease, unless `heldBy` a hold
 * or `pacedBy` a budget, when only a sweeper starts it, or `ignored`, when nothing starts it), or stored before, started or not (`waiting`
 * for a hold or a budget), or stored before under another event ID (a replay, stored and started nothing).
 */
export type Stored =
  | { stored: true; heldBy: string | null; pacedBy: string | null }
  | { stored: false; startedAt: Date | null; waiting: boolean }
  | { stored: false; replayOf: string }
  | { stored: false; takenBy: string };

/**
 * Stores the body and what to start for it, once per source and event ID: a redelivery, or a retry
 * after Temporal answered 503, stores nothing again, and an erased body stays erased. The start is
 * the storing process's for `leaseMs`, then any sweeper's (src/intake/). `bodySha256` is the body's
 * hash when the adapter asks for replays to be found (GitHub's, whose delivery ID is unsigned): a
 * body this source stored under another event ID, erased or not, is not stored again (only under the
 * same type, when the input has a `replayScope`). Two copies
 * racing past this check are still told apart by the ledger's claim. A workflow ID another source
 * stored first (`takenBy`) is not this event's: nothing is stored.
 */
export async function storeBody(
  db: Queryable,
  event: {
    source: string;
    eventId: string;
    workflowId: string;
    provider: ProviderKind;
    via: EventVia;
    receivedAt: string;
    bodySha256?: string;
    start: StartSpec;
    leaseMs: number;
    skipped?: Skipped;
    /** What waits find it by (src/intake/waits.ts); none when no wait is on its type. */
    waitKeys?: string[];
  },
  body: ReceivedBody,
): Promise<Stored> {
  const scope = event.start.input.replayScope;
  const { rows } = await db.query<StoreRow>(STORE_BODY, [
    event.source,
    event.eventId,
    event.workflowId,
    event.provider,
    event.via,
    body.contentType ?? null,
    JSON.stringify(body.signatureHeaders),
    body.raw,
    body.raw.length,
    event.bodySha256 ?? createHash('sha256').update(body.raw).digest('hex'),
    event.receivedAt,
    JSON.stringify(event.start),
    event.leaseMs,
    event.start.tenant ?? null,
    event.start.input.type,
    event.skipped !== undefined,
    event.skipped === 'filtered',
    event.waitKeys ?? null,
    event.bodySha256 ?? null,
    scope === undefined ? null : event.start.input.type,
  ]);
  const row = rows[0]!;
  if (row.taken_by !== null) return { stored: false, takenBy: row.taken_by };
  if (row.replay_of !== null) return { stored: false, replayOf: row.replay_of };
  if (row.inserted) return { stored: true, heldBy: row.held_by, pacedBy: row.paced_by };
  if (row.waiting !== null) return { stored: false, startedAt: row.started_at, waiting: row.waiting };
  // Stored by a copy that committed after this statement began (its insert waited on that copy's).
  const existing = await db.query<{ started_at: Date | null; waiting: boolean }>(STORED_ROW, [event.source, event.eventId]);
  return { stored: false, startedAt: existing.rows[0]?.started_at ?? null, waiting: existing.rows[0]?.waiting ?? false };
}

interface StoreRow {
  taken_by: string | null;
  replay_of: string | null;
  inserted: boolean | null;
  held_by: string | null;
  paced_by: string | null;
  started_at: Date | null;
  waiting: boolean | null;
}

/** The row stored for source `$1`'s event `$2`: whether its start was made, and whether a hold or a budget keeps it waiting. */
const STORED_ROW = 'SELECT started_at, (held_by IS NOT NULL OR paced_by IS NOT NULL) AS waiting FROM event_bodies WHERE source = $1 AND event_id = $2';

/**
 * storeBody's one round trip: the workflow ID another source took (`taken`), the body stored before
 * under another event ID (`earlier`, when `$19` is the hash to look for; under the type `$20`, when
 * set), else the insert; and the row as it was before, for a copy stored already. A hold that matches,
 * or the source's standing rate, is found by the insert itself: a hold committed before it holds this
 * row, and one committed after finds it unstarted (createHold). A paced row is due at once: no fast
 * path starts it, the sweepers do as its budget allows.
 */
const STORE_BODY: Statement = {
  name: 'store-body',
  text: `WITH taken AS (
     SELECT source FROM event_bodies WHERE workflow_id = $3 AND source <> $1 LIMIT 1
   ), earlier AS (
     SELECT event_id FROM event_bodies
     WHERE source = $1 AND sha256 = $19 AND event_id <> $2 AND ($20::text IS NULL OR start->'input'->>'type' = $20::text) LIMIT 1
   ), inserted AS (
     INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, start, start_due_at, tenant, held_by, paced_by, ignored_at, started_at, filtered, wait_keys)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now() + CASE WHEN ${standingBudget} IS NULL THEN $13 ELSE 0 END * interval '1 millisecond', $14,
       CASE WHEN NOT $16 THEN ${matchingHold('$15::text')} END, CASE WHEN NOT $16 THEN ${standingBudget} END, CASE WHEN $16 THEN now() END, CASE WHEN $16 THEN now() END, $17, $18
     WHERE NOT EXISTS (SELECT FROM taken) AND NOT EXISTS (SELECT FROM earlier)
     ON CONFLICT (source, event_id) DO NOTHING RETURNING true AS inserted, held_by, paced_by
   ), existing AS (${STORED_ROW})
   SELECT (SELECT source FROM taken) AS taken_by, (SELECT event_id FROM earlier) AS replay_of,
     inserted.inserted, inserted.held_by, inserted.paced_by,
     existing.started_at, existing.waiting
   FROM (SELECT) AS one LEFT JOIN inserted ON true LEFT JOIN existing ON true`,
};

/** The stored body of source's event: how a flow's steps read it (activities/event-body.ts). */
export async function loadBody(db: Queryable, source: string, eventId: string): Promise<StoredBody | undefined> {
  const { rows } = await db.query<BodyRow>(LOAD_BODY, [source, eventId]);
  return rows[0] && fromRow(rows[0]);
}

/** The stored body of the event workflow with this ID. */
export async function loadBodyByWorkflowId(db: Queryable, workflowId: string): Promise<StoredBody | undefined> {
  const { rows } = await db.query<BodyRow>(`SELECT ${COLUMNS} FROM event_bodies WHERE workflow_id = $1`, [workflowId]);
  return rows[0] && fromRow(rows[0]);
}

const COLUMNS = 'source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, erased_at, purged_at';

/** Prepared (src/db/database.ts): PostgreSQL planned it for every step that reads a body, four times as long as it ran it. */
const LOAD_BODY: Statement = { name: 'load-body', text: `SELECT ${COLUMNS} FROM event_bodies WHERE source = $1 AND event_id = $2` };

interface BodyRow {
  source: string;
  event_id: string;
  workflow_id: string;
  provider: ProviderKind;
  via: EventVia;
  content_type: string | null;
  signature_headers: Record<string, string>;
  body: Uint8Array | null;
  size: number;
  sha256: string;
  received_at: Date | string;
  erased_at: Date | string | null;
  purged_at: Date | string | null;
}

function fromRow(row: BodyRow): StoredBody {
  return {
    source: row.source,
    eventId: row.event_id,
    workflowId: row.workflow_id,
    provider: row.provider,
    via: row.via,
    contentType: row.content_type,
    signatureHeaders: row.signature_headers,
    body: row.body && Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength),
    size: row.size,
    sha256: row.sha256,
    receivedAt: new Date(row.received_at),
    erasedAt: row.erased_at === null ? null : new Date(row.erased_at),
    purgedAt: row.purged_at === null ? null : new Date(row.purged_at),
  };
}

/** How far back `status` and the `webhook_unrouted_events` gauge count event types nothing routes. */
export const UNROUTED_WINDOW_MS = 7 * 86_400_000;

/** Event types nothing routes, by source and type, over the last `sinceMs`: how many, and the last one's time. */
export interface UnroutedType {
  source: string;
  type: string;
  count: number;
  lastReceivedAt: string;
}

/**
 * The types the default flow (`defaultFlow`, which records and ignores) received over the last
 * `sinceMs`, the most frequent first (at most `limit`): a provider's new event type shows here before
 * anyone routes it. Served by the partial index of migration 015 for `recordEvent`.
 */
export async function unroutedTypes(db: Queryable, defaultFlow: string, sinceMs: number, limit = 100): Promise<UnroutedType[]> {
  if (!/^\w+$/.test(defaultFlow)) throw new TypeError(`Not a flow name: ${defaultFlow}`);
  const { rows } = await db.query<{ source: string; type: string; count: number; last: Date }>(
    `SELECT source, start->'input'->>'type' AS type, count(*)::int AS count, max(received_at) AS last FROM event_bodies
     WHERE start->>'flow' = '${defaultFlow}' AND ignored_at IS NULL AND received_at > now() - $1 * interval '1 millisecond'
     GROUP BY 1, 2 ORDER BY count DESC, source, type LIMIT $2`,
    [sinceMs, limit],
  );
  return rows.map((row) => ({ source: row.source, type: row.type, count: row.count, lastReceivedAt: new Date(row.last).toISOString() }));
}

/** A stored event as `routes test` and `routes replay` read it: its body, its type, and the flows its start named. */
export interface StoredEvent extends StoredBody {
  type: string;
  /** The input its start named: the event's identity (type, times, subject) as the receiver verified it. */
  input: WebhookEvent;
  /** The workflow its start named: its one flow, `routeEvent` (its subscribers in `routed`), or the default flow. */
  flow: string | null;
  /** The flows a route's filters took it for, when its flow is `routeEvent`. */
  routed: string[];
  /** A route said `ignore`, or its filters took it for no flow: nothing started. */
  skipped: boolean;
}

/** Which stored events: received in `[since, until)`, of a source, of a type or `prefix*`. */
export interface StoredEventWindow {
  since: Date;
  until: Date;
  source?: string;
  type?: string;
}

/** A page of stored events in (source, event ID) order after `after`: each event once, whatever arrives meanwhile. */
export async function storedEvents(
  db: Queryable,
  window: StoredEventWindow,
  after: { source: string; eventId: string } | null,
  limit: number,
): Promise<StoredEvent[]> {
  const params: unknown[] = [window.since, window.until, limit];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['received_at >= $1', 'received_at < $2', 'start IS NOT NULL'];
  if (window.source !== undefined) where.push(`source = ${param(window.source)}`);
  if (window.type?.endsWith('*')) {
    if (window.type !== '*') where.push(`starts_with(start->'input'->>'type', ${param(window.type.slice(0, -1))})`);
  } else if (window.type !== undefined) where.push(`start->'input'->>'type' = ${param(window.type)}`);
  if (after) where.push(`(source, event_id) > (${param(after.source)}, ${param(after.eventId)})`);
  const { rows } = await db.query<BodyRow & { type: string; input: WebhookEvent; flow: string | null; routed: string[] | null; skipped: boolean }>(
    `SELECT ${COLUMNS}, start->'input'->>'type' AS type, start->'input' AS input, start->>'flow' AS flow, ignored_at IS NOT NULL AS skipped,
       (SELECT array_agg(routed->>'flow') FROM jsonb_array_elements(start->'input'->'routes'->'flows') AS routed) AS routed
     FROM event_bodies WHERE ${where.join(' AND ')} ORDER BY source, event_id LIMIT $3`,
    params,
  );
  return rows.map((row) => ({ ...fromRow(row), type: row.type, input: row.input, flow: row.flow, routed: row.routed ?? [], skipped: row.skipped }));
}

/** Every stored event of the window, read a page at a time. */
export async function* eachStoredEvent(db: Queryable, window: StoredEventWindow, pageSize = 500): AsyncGenerator<StoredEvent> {
  for (let after: { source: string; eventId: string } | null = null; ; ) {
    const page = await storedEvents(db, window, after, pageSize);
    if (page.length === 0) return;
    yield* page;
    after = { source: page.at(-1)!.source, eventId: page.at(-1)!.eventId };
  }
}

/** Whether the body store holds any event of `source` (by its primary key's first column: one index probe). */
export async function sourceHasEvents(db: Queryable, source: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM event_bodies WHERE source = $1 LIMIT 1', [source])).rows.length > 0;
}
