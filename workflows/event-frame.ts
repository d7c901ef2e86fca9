import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  TemporalFailure,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  ledgerEventId,
  WEBHOOK_ERROR_CLASS,
  type BodyStep,
  type ClaimResult,
  type EventFields,
  type EventOutcome,
  type EventStatus,
  type Flow,
  type WebhookEvent,
} from '../contracts';
import { dbActivity } from './activities';
import { Progress } from './progress';
import { endTurn, takeTurn, type HeldTurn } from './turns';

/**
 * The frame every event flow runs in: claim the event, run, record how it ended; and the keys of
 * its side effects (idempotency keys, ledger steps) and the fields it reads.
 */

/**
 * Records how the event ended in the ledger, sets the outcome the `status` query reports, and
 * returns it as the workflow's result: the last step of every event workflow that claimed its event.
 */
export async function finish(
  event: WebhookEvent,
  progress: Progress,
  outcome: string,
  ledger: { status: EventStatus; detail: unknown },
): Promise<EventOutcome> {
  await dbActivity.completeEvent({ source: event.source, eventId: ledgerEventId(event), status: ledger.status, outcome: ledger.detail });
  progress.end(outcome);
  return { outcome, source: event.source, eventId: event.id, type: event.type };
}

/**
 * The frame of every event workflow: claim the event for this run chain (or complete as a
 * duplicate, doing nothing), then run the flow. A flow that fails or is cancelled records `failed`
 * in the ledger before the workflow ends, so the ledger never says `processing` for an event
 * Temporal has stopped working on.
 */
export async function handleEvent(event: WebhookEvent, flow: (progress: Progress) => Promise<EventOutcome>, keyedBy?: Flow): Promise<EventOutcome> {
  const progress = new Progress(event.id, event.type);
  const claimed = await claim(event, progress);
  if (claimed !== 'claimed') return nothingToDo(event, progress, claimed);
  let held: HeldTurn | undefined;
  try {
    // A keyed flow's event runs in its key's turn (docs/entities.md); histories from before keys run
    // alone. Cancelled while it waits, it is recorded as failed like any other.
    held = keyedBy?.key && patched(ENTITY_TURNS) ? await takeTurn(event, keyedBy, fieldsOf(event, keyedBy), progress) : undefined;
    const entity = held && { key: held.key, after: held.turn.after?.eventId ?? null };
    if (held && !held.turn.go) return { ...(await finish(event, progress, 'superseded', { status: 'completed', detail: entity })), entity };
    const outcome = await flow(progress);
    if (!held) return outcome;
    await endTurn(held, event.id, null);
    return { ...outcome, entity };
  } catch (error) {
    if (!(error instanceof TemporalFailure)) throw error;
    if (held?.turn.go) await endTurn(held, event.id, error.message);
    const outcome = isCancellation(error)
      ? { cancelled: true, errorClass: 'Cancelled' }
      : { failure: error.message, type: error instanceof ApplicationFailure ? error.type : error.name, errorClass: errorClass(error) };
    // Histories recorded before the attribute replay without it.
    if (patched(ERROR_CLASS_ATTRIBUTE)) upsertSearchAttributes([{ key: WEBHOOK_ERROR_CLASS, value: searchableClass(outcome.errorClass) }]);
    await CancellationScope.nonCancellable(() =>
      dbActivity.completeEvent({ source: event.source, eventId: ledgerEventId(event), status: 'failed', outcome: { ...outcome, ...failureDetail(error) } }),
    );
    if (progress.outcome === null) progress.end(isCancellation(error) ? 'cancelled' : 'failed');
    throw error;
  }
}

/**
 * The failure's stable kind, never its text: the activity that failed and the type of the deepest
 * cause (`chargeOrder › CardDeclined`, `sendEmail › Timeout`), or the type the flow threw itself
 * (`PaymentDeclined`). Events that failed the same way share it, and the console groups them by it.
 */
function errorClass(error: TemporalFailure): string {
  const steps: string[] = [];
  let root: TemporalFailure = error;
  for (let current: unknown = error; current instanceof TemporalFailure; current = current.cause) {
    if (current instanceof ActivityFailure && current.activityType) steps.push(current.activityType);
    root = current;
  }
  const kind = root instanceof ApplicationFailure ? (root.type ?? 'Error') : root instanceof TimeoutFailure ? 'Timeout' : root.name;
  return [...steps, kind].join(' › ');
}

const ERROR_CLASS_ATTRIBUTE = 'error-class-search-attribute';
const ENTITY_TURNS = 'entity-turns';

/** A failure class and its last part, the failure's own type (`chargeOrder › CardDeclined`, `CardDeclined`): a filter finds it by either. */
function searchableClass(errorClass: string): string[] {
  const kind = errorClass.split(' › ').at(-1)!;
  return kind === errorClass ? [errorClass] : [errorClass, kind];
}

/** What a flow put on its own failure for the ledger (`ApplicationFailure` details), if anything. */
function failureDetail(error: TemporalFailure): Record<string, unknown> {
  const [detail] = error instanceof ApplicationFailure ? (error.details ?? []) : [];
  return typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>) : {};
}

/** The result of a workflow whose event another run chain owns, or whose body another event carried first: nothing done. */
function nothingToDo(event: WebhookEvent, progress: Progress, outcome: 'duplicate' | 'replay'): EventOutcome {
  progress.end(outcome);
  return { outcome, source: event.source, eventId: event.id, type: event.type };
}

/** Claims the event in the ledger for this run chain; see `ClaimResult`. */
async function claim(event: WebhookEvent, progress: Progress): Promise<ClaimResult> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const claimed = await dbActivity.claimEvent({
    source: event.source,
    eventId: ledgerEventId(event),
    type: event.type,
    workflowId,
    firstExecutionRunId,
    bodySha256: event.bodySha256,
    ...(event.replayScope !== undefined && { replayScope: event.replayScope }),
  });
  progress.done('claim');
  return claimed;
}

/**
 * The Idempotency-Key of this event's calls to Stripe and the email API: its workflow ID (the event
 * ID behind the source's prefix, so two sources' events with one ID never share a key), plus the
 * step when a flow makes more than one call of a kind.
 */
export function idempotencyKey(step?: string): string {
  const { workflowId } = workflowInfo();
  return step ? `${workflowId}:${step}` : workflowId;
}

/** The ledger key of one step of this event (a subscriber's own), and the body of an event started before bodies were stored. */
export function stepOf(event: WebhookEvent, step: string): BodyStep {
  return {
    source: event.source,
    eventId: ledgerEventId(event),
    step,
    ...(event.subscriber !== undefined && { bodyOf: event.id }),
    ...(event.payload !== undefined && { payload: event.payload }),
  };
}

/** The fields the receiver copied for this flow; an event started before it did has its body instead. */
export function fieldsOf(event: WebhookEvent, flow: Flow): EventFields {
  return event.fields ?? flow.readFields(event.payload);
}
