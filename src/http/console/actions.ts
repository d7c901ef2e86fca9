import type { Request } from 'express';
import { OperationRejectedError, ResourceNotFoundError } from '../../core/errors';

/** The actions of the event page, and what each confirmation says will happen. */
export const ACTIONS = ['signal', 'retry', 'reset', 'cancel', 'erase'] as const;
export type EventAction = (typeof ACTIONS)[number];

/** What a confirmation says each action will do. */
export const CONFIRM: Record<Exclude<EventAction, 'signal'>, (eventId: string) => string> = {
  retry: (id) =>
    `Retries event ${id}: if it failed, its last run is reset to its last failure and runs on from there. It keeps its ledger claim, so no step that finished (a charge, an email) runs again. A completed or running event is left alone.`,
  reset: (id) =>
    `Resets event ${id} to its last failure: a new run replays its history up to there and continues. Finished steps are not repeated; the ledger answers them.`,
  cancel: (id) => `Asks event ${id}'s workflow to cancel: it stops at its next step and is recorded as failed (cancelled) in the ledger.`,
  erase: (id) =>
    `Erases event ${id}'s personal data from every store: its stored body and headers, its Temporal history and the rows it wrote. This cannot be undone; the erasure itself is recorded with your reason.`,
};

/** What the event page says after each action. */
export const DONE: Record<EventAction, string> = {
  signal: 'The signal was sent.',
  retry: 'The event was reset to its last failure and runs again.',
  reset: 'The event was reset to its last failure.',
  cancel: 'Cancellation was requested.',
  erase: "The event's personal data was erased.",
};

export function actionOf(action: string): EventAction {
  if (!(ACTIONS as readonly string[]).includes(action)) throw new ResourceNotFoundError('console action', action);
  return action as EventAction;
}

/** A signal's argument from the event page's form: its text fields (`field.by`), or JSON; none when empty. */
export function signalData(query: Request['query']): unknown {
  const fields = Object.entries(query).filter(
    (entry): entry is [string, string] => entry[0].startsWith('field.') && typeof entry[1] === 'string' && entry[1] !== '',
  );
  if (fields.length > 0) return Object.fromEntries(fields.map(([name, value]) => [name.slice('field.'.length), value]));
  if (typeof query.json === 'string' && query.json.trim() !== '') {
    try {
      return JSON.parse(query.json) as unknown;
    } catch {
      throw new OperationRejectedError('The argument is not JSON.');
    }
  }
  return undefined;
}
