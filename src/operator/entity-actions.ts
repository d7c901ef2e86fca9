import { ENTITY_ACTIONS } from '../../contracts';
import type { EntityOperations, EntityView } from '../temporal/entities';
import { reason, type ActionField, type ActionInput } from './event-actions';

/**
 * An operator's decision for a key parked on a failed event (docs/entities.md), declared once as the
 * event actions are (src/operator/event-actions.ts): what it takes, what it does, and its words. Not
 * to be confused with contracts' `EntityAction`, the signal it ends up sending the entity. The CLI
 * (`entities <action> <flow> <key>`), `/admin` (`POST /admin/entities/:flow/:key/<action>`) and the
 * console (the key's page) each derive their form of it from here, and check its input with the one
 * `readActionInput`; `EntityOperations` keeps its own checks (a blank reason, a key not parked).
 */
export interface EntityOperatorAction {
  name: (typeof ENTITY_ACTIONS)[number];
  /** What it does, in one line: the CLI's description. */
  help: string;
  fields: readonly ActionField[];
  /** The console's button for the failed event. */
  button(failedEventId: string): string;
  /** The console's button is drawn as a danger (the failed event is not run). */
  danger?: boolean;
  /** What the console says once it is done. */
  done: string;
  /** What the audit trail records as done. */
  audited: string;
  run(entities: EntityOperations, flow: string, key: string, input: ActionInput, as: { source?: string; by: string }): Promise<EntityView>;
  /** The CLI's line for the answer. */
  said(flow: string, key: string, view: EntityView): string;
}

const retry: EntityOperatorAction = {
  name: 'retry',
  help: 'Run the failed event a key is parked on again, from just before its failure (events retry), in its turn; the key then goes on.',
  fields: [reason("the entity's history", { required: true, default: 'retried once the cause was fixed' })],
  button: (failedEventId) => `Retry ${failedEventId}`,
  done: 'Retrying: the failed event runs again in its turn.',
  audited: "retry the key's failed event",
  run: (entities, flow, key, input, as) => entities.retry(flow, key, { ...as, reason: input.reason ?? '' }),
  said: (flow, key, view) => `Retrying ${view.parked!.eventId} on ${flow} key ${key}.`,
};

const skip: EntityOperatorAction = {
  name: 'skip',
  help: 'Let a parked key go on without its failed event, which stays failed.',
  fields: [reason("the entity's history")],
  button: () => 'Skip it',
  danger: true,
  done: 'Skipped: the key goes on without its failed event.',
  audited: "skip the key's failed event",
  run: (entities, flow, key, input, as) => entities.skip(flow, key, { ...as, reason: input.reason ?? '' }),
  said: (flow, key, view) => `Skipped ${view.parked!.eventId} on ${flow} key ${key}.`,
};

/** Every decision for a parked key, in the order the CLI's help and the console offer them. */
export const ENTITY_OPERATOR_ACTIONS: readonly EntityOperatorAction[] = [retry, skip];

/** The decision of that name; undefined for none. */
export function entityActionNamed(name: string): EntityOperatorAction | undefined {
  return ENTITY_OPERATOR_ACTIONS.find((action) => action.name === name);
}
