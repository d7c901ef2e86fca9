import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, readPointer, type BodyField, type BodyStep, type Text } from '../contracts';
import type { Queryable } from '../src/db/database';
import { loadBody } from '../src/db/event-bodies';
import { parseStoredBody } from '../src/providers/body';

/**
 * The parsed body of the step's event, from the body store (or, for an event started before bodies
 * were stored, from the step itself). An erased body fails the step for good: nothing can bring it back.
 */
export async function readEventBody(db: Queryable, step: BodyStep): Promise<unknown> {
  if (step.payload !== undefined) return step.payload;
  const stored = await loadBody(db, step.source, step.eventId);
  if (!stored?.body) {
    throw ApplicationFailure.nonRetryable(`The body of event ${step.eventId} (${step.source}) is ${stored ? 'erased' : 'not stored'}.`, FailureType.EVENT_BODY_MISSING);
  }
  return parseStoredBody(stored, stored.body);
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
