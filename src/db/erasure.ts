import { EventNotFoundError, EventRunningError } from '../core/errors';
import type { Database, Queryable } from './database';

/** Who erased an event's personal data (the operator or token), for whom if they said, when, and why. */
export interface Erasure {
  erasedAt: string;
  erasedBy: string;
  requestedBy: string | null;
  reason: string;
}

/** `by`: who erases, as authenticated (an admin token's name, the CLI's operator); `requestedBy`: whom the caller says it is for. */
export interface ErasureRequest {
  by: string;
  requestedBy?: string;
  reason: string;
}

export interface ErasureResult extends Erasure {
  /** False when the event had been erased before: nothing was changed, and `erasedAt` is the first erasure's. */
  erasedNow: boolean;
  /** Whether the body store had this event (a body, erased now or before). */
  bodyStored: boolean;
  /** Order rows whose customer email was removed, and subscription rows whose stored object was. */
  ordersCleared: number;
  subscriptionsCleared: number;
}

/**
 * Removes an event's personal data from every table that holds it, in one transaction, and records
 * who did it and why (`event_erasures`): the body store's bytes and signature headers (of every
 * copy of the same body in the source); the customer's email on the orders the event wrote; the
 * subscription object it stored; the customer email in ledger step results written before they left
 * it out. The ledger's claim, status and outcome stay, so the event is still known as processed. Undefined when no table knows the event.
 */
export async function eraseEvent(db: Database, workflowId: string, request: ErasureRequest): Promise<ErasureResult | undefined> {
  return db.transaction(async (tx) => {
    const known = await tx.query<{ source: string; event_id: string; stored: boolean }>(
      `SELECT source, event_id, true AS stored FROM event_bodies WHERE workflow_id = $1
       UNION SELECT source, event_id, false FROM processed_events WHERE workflow_id = $1`,
      [workflowId],
    );
    const event = known.rows[0];
    if (!event) return undefined;
    const inserted = await tx.query(
      `INSERT INTO event_erasures (workflow_id, erased_by, requested_by, reason) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workflow_id) DO NOTHING RETURNING workflow_id`,
      [workflowId, request.by, request.requestedBy ?? null, request.reason],
    );
    const { source, event_id: eventId } = event;
    const bodyStored = known.rows.some((row) => row.stored);
    // By hash as well as by ID: copies of the same body stored under other IDs (replays that raced
    // past the receiver's check, or were stored before it) are the same personal data.
    await tx.query(
      `UPDATE event_bodies SET body = NULL, signature_headers = '{}', erased_at = now()
       WHERE source = $1 AND erased_at IS NULL
         AND (event_id = $2 OR sha256 = (SELECT sha256 FROM event_bodies WHERE source = $1 AND event_id = $2))`,
      [source, eventId],
    );
    const orders = await tx.query(
      `UPDATE orders SET customer_email = NULL, updated_at = now() WHERE source = $1 AND event_id = $2 AND customer_email IS NOT NULL RETURNING id`,
      [source, eventId],
    );
    const subscriptions = await tx.query(
      `UPDATE subscriptions SET data = '{}', updated_at = now()
       WHERE last_event_id = $2 AND (last_event_source = $1 OR last_event_source IS NULL) AND data <> '{}' RETURNING id`,
      [source, eventId],
    );
    await tx.query(
      `UPDATE event_steps SET result = result - 'customerEmail' WHERE source = $1 AND event_id = $2 AND jsonb_typeof(result) = 'object' AND result ? 'customerEmail'`,
      [source, eventId],
    );
    return {
      ...(await erasureOf(tx, workflowId))!,
      erasedNow: inserted.rows.length > 0,
      bodyStored,
      ordersCleared: orders.rows.length,
      subscriptionsCleared: subscriptions.rows.length,
    };
  });
}

/** The erasure of this event workflow, if it was erased. */
export async function erasureOf(db: Queryable, workflowId: string): Promise<Erasure | null> {
  const { rows } = await db.query<{ erased_at: Date; erased_by: string; requested_by: string | null; reason: string }>(
    'SELECT erased_at, erased_by, requested_by, reason FROM event_erasures WHERE workflow_id = $1',
    [workflowId],
  );
  const row = rows[0];
  return row ? { erasedAt: new Date(row.erased_at).toISOString(), erasedBy: row.erased_by, requestedBy: row.requested_by, reason: row.reason } : null;
}

/** What erasing needs from Temporal, for an event by its workflow ID. */
export interface ErasureTemporal {
  /** Whether Temporal still has the workflow, and whether it runs. */
  state(workflowId: string): Promise<'running' | 'closed' | 'not retained'>;
  /** Deletes the workflow's execution (an event started before bodies were stored held its body in history). */
  deleteExecution(workflowId: string): Promise<void>;
}

/** What `events erase` did, store by store. */
export interface ErasureReport extends ErasureResult {
  eventId: string;
  /**
   * `holds no personal data`: the workflow's input held only IDs and amounts. `deleted`: the event
   * was started before bodies were stored, so its history held the body, and the execution was deleted.
   * `not retained`: Temporal no longer has it.
   */
  temporal: 'holds no personal data' | 'deleted' | 'not retained';
}

/**
 * Removes the event's personal data from every store (`eraseEvent`) and records who did it and
 * why. The workflow must have closed. Temporal's history holds only IDs and amounts, except for an
 * event started before bodies were stored, whose execution is deleted.
 */
export async function erase(db: Database, temporal: ErasureTemporal, eventId: string, request: ErasureRequest): Promise<ErasureReport> {
  const state = await temporal.state(eventId);
  if (state === 'running') {
    throw new EventRunningError(`Event ${eventId} is still running: erase it once it has closed (or cancel or terminate it first), so no step needs its body.`);
  }
  const erased = await eraseEvent(db, eventId, request);
  if (!erased) throw new EventNotFoundError({ eventId: eventId, why: 'neither Temporal nor the database knows that ID' });
  if (state === 'not retained') return { eventId, ...erased, temporal: 'not retained' };
  if (erased.bodyStored) return { eventId, ...erased, temporal: 'holds no personal data' };
  await temporal.deleteExecution(eventId);
  return { eventId, ...erased, temporal: 'deleted' };
}
