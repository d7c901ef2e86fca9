import type { Queryable } from '../db/database';
import { loadBodyByWorkflowId, type StoredBody } from '../db/event-bodies';
import { erasureOf } from '../db/erasure';
import type { BodyView, EventView, InboxStatusName } from './event-view';

/** The view of an event the body store holds and Temporal has no workflow for (held, ignored, filtered, not started yet). */
export async function inboxView(db: Queryable, eventId: string, uiUrl: string): Promise<EventView | undefined> {
  const { rows } = await db.query<{
    flow: string | null;
    summary: string | null;
    type: string | null;
    tenant: string | null;
    held_by: string | null;
    ignored_at: Date | null;
    filtered: boolean;
    dead_lettered_at: Date | null;
    start_error: string | null;
  }>(
    `SELECT start->>'flow' AS flow, start->>'summary' AS summary, start->'input'->>'type' AS type, tenant, held_by, ignored_at, filtered, dead_lettered_at, start_error
     FROM event_bodies WHERE workflow_id = $1`,
    [eventId],
  );
  const row = rows[0];
  const stored = row && (await loadBodyByWorkflowId(db, eventId));
  if (!row || !stored) return undefined;
  const status: InboxStatusName = row.ignored_at
    ? row.filtered
      ? 'filtered'
      : 'ignored'
    : row.held_by
      ? 'held'
      : row.dead_lettered_at
        ? 'dead-lettered'
        : 'not started';
  return {
    eventId,
    runId: '',
    workflowType: row.ignored_at ? (row.filtered ? '(none: no filter of its route took it)' : '(none: its route says ignore)') : (row.flow ?? '-'),
    status,
    source: stored.source,
    eventType: row.type,
    tenant: row.tenant,
    errorClass: null,
    startTime: stored.receivedAt.toISOString(),
    closeTime: null,
    summary: row.summary,
    progress: null,
    ledger: null,
    erasure: await erasureOf(db, eventId),
    body: bodyView(stored),
    result: null,
    failure: row.start_error && !row.ignored_at ? [row.start_error] : null,
    pendingActivities: [],
    uiUrl,
  };
}

/** The stored body as `events show` reports it: its size and hash, and whether it is still there. */
export function bodyView(stored: StoredBody | undefined): BodyView | null {
  if (!stored) return null;
  const state = stored.body ? 'stored' : stored.purgedAt ? 'purged' : 'erased';
  return { state, bytes: stored.size, sha256: stored.sha256, receivedAt: stored.receivedAt.toISOString(), purgedAt: stored.purgedAt?.toISOString() ?? null };
}
