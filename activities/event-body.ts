import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { FailureType, readPointer, type BodyField, type BodyStep, type Text } from '../contracts';
import type { Queryable } from '../src/db/database';
import { loadBody } from '../src/db/event-bodies';
import { parseStoredBody } from '../src/providers/body';

/**
 * How long a step waits for a body that is not stored: longer than the providers' redeliveries of a
 * fresh event take to come back (Shopify's 8 tries span 4 hours). A redelivery stores the body again
 * and the next attempt finds it.
 */
export const MISSING_BODY_WAIT_MS = 6 * 60 * 60 * 1000;
/** The longest pause between two looks for a missing body. */
const MISSING_BODY_MAX_DELAY_MS = 5 * 60 * 1000;

/**
 * The parsed body of the step's event, from the body store (or, for an event started before bodies
 * were stored, from the step itself). An erased body fails the step for good: nothing can bring it
 * back. A body that is not stored (the store lost it) is looked for again, 1 s, 2 s, 4 s … 5 min
 * apart, for MISSING_BODY_WAIT_MS since the step's first attempt; then the step fails, naming the
 * event and the fix.
 */
export async function readEventBody(db: Queryable, step: BodyStep): Promise<unknown> {
  if (step.payload !== undefined) return step.payload;
  const bodyOf = step.bodyOf ?? step.eventId;
  const stored = await loadBody(db, step.source, bodyOf);
  if (stored?.body) return parseStoredBody(stored, stored.body);
  if (stored) throw ApplicationFailure.nonRetryable(`The body of event ${bodyOf} (${step.source}) is erased.`, FailureType.EVENT_BODY_MISSING);
  const { attempt, scheduledTimestampMs } = activityInfo();
  if (Date.now() - scheduledTimestampMs < MISSING_BODY_WAIT_MS) {
    throw ApplicationFailure.create({
      message: `The body of event ${bodyOf} (${step.source}) is not stored yet; a redelivery of the event stores it.`,
      type: FailureType.EVENT_BODY_MISSING,
      nextRetryDelay: Math.min(1000 * 2 ** Math.min(attempt - 1, 20), MISSING_BODY_MAX_DELAY_MS),
    });
  }
  throw ApplicationFailure.nonRetryable(
    `The body of event ${bodyOf} (${step.source}) is not stored, and no redelivery brought it in ${MISSING_BODY_WAIT_MS / 3_600_000} hours. ` +
      `Redeliver the event from ${step.source}'s dashboard (or \`durable-webhooks backfill\`), then \`durable-webhooks events reset ${step.eventId} --to last-failure --reason "body redelivered"\`.`,
    FailureType.EVENT_BODY_MISSING,
  );
}

/** A body field as text: strings and numbers as they are, anything else (or nothing) as `otherwise`. */
export function fieldText(body: unknown, field: BodyField): string {
  const value = readPointer(body, field.fromBody);
  return typeof value === 'string' || typeof value === 'number' ? String(value) : (field.otherwise ?? '');
}

export function renderText(body: unknown, text: Text): string {
  return typeof text === 'string' ? text : text.map((part) => (typeof part === 'string' ? part : fieldText(body, part))).join('');
}

/** True when rendering needs the body. */
export function readsBody(...values: Array<Text | BodyField | null>): boolean {
  return values.some((value) => value !== null && typeof value !== 'string' && ('fromBody' in value || value.some((part) => typeof part !== 'string')));
}
