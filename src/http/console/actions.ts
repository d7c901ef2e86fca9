import type { Request } from 'express';
import { OperationRejectedError, ResourceNotFoundError } from '../../core/errors';
import { eventActionNamed, type EventAction } from '../../operator/event-actions';

/** The event action a console path names (src/operator/event-actions.ts); 404 for none. */
export function actionOf(name: string): EventAction {
  const action = eventActionNamed(name);
  if (!action) throw new ResourceNotFoundError('console action', name);
  return action;
}

/** A signal's argument from the event page's form: its text fields (`field.by`), or JSON; none when empty. */
export function signalData(query: Request['query']): unknown {
  const fields = Object.entries(query).filter(
    (entry): entry is [string, string] => entry[0].startsWith('field.') && typeof entry[1] === 'string' && entry[1] !== '',
  );
  if (fields.length > 0) return Object.fromEntries(fields.map(([name, value]) => [name.slice('field.'.length), value]));
  if (typeof query.json === 'string' && query.json.trim() !== '') return jsonOf(query.json);
  return undefined;
}

/** A JSON text from a form, refused as the operator's mistake when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new OperationRejectedError('The argument is not JSON.');
  }
}
