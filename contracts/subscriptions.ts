import { defineQuery, defineSignal } from '@temporalio/workflow';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';

/**
 * One Stripe subscription event, as the entity workflow applies it: IDs and status only; the
 * subscription object is read from the event's stored body (`source`, `eventId`) when it is stored.
 * Updates sent before bodies were stored have no `source` and carry the whole object.
 */
export interface SubscriptionUpdate {
  eventId: string;
  source?: string;
  /** The event's `created`, seconds: with the event ID, it orders updates. */
  created: number;
  subscription: { id: string; customer?: string | null; status: string } & Record<string, unknown>;
  deleted: boolean;
}

export interface SubscriptionState {
  subscriptionId: string;
  /** The newest update applied: its event's `created` and ID. */
  last: { created: number; eventId: string } | null;
  status: string | null;
  /** Updates received by this run, applied or ignored. */
  updatesSeen: number;
}

export interface SubscriptionEntityInput {
  subscriptionId: string;
  /** Carried over by continue-as-new. */
  last?: SubscriptionState['last'];
}

export const applySignal = defineSignal<[SubscriptionUpdate]>('apply');
export const subscriptionStateQuery = defineQuery<SubscriptionState>('state');

/**
 * True when `update` comes after `last`: a later `created`, or the same second and a greater event
 * ID in UTF-8 byte order, the order PostgreSQL compares with `COLLATE "C"` (src/db/subscriptions.ts).
 * The entity workflow and the database must agree, and JavaScript's `<` (UTF-16 units) and a
 * locale collation both differ from it.
 */
export function isNewerUpdate(update: { created: number; eventId: string }, last: { created: number; eventId: string }): boolean {
  return update.created > last.created || (update.created === last.created && compareBytes(update.eventId, last.eventId) > 0);
}

/** UTF-8 byte order, which is code point order. */
function compareBytes(a: string, b: string): number {
  const left = Array.from(a, (character) => character.codePointAt(0)!);
  const right = Array.from(b, (character) => character.codePointAt(0)!);
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return Math.sign(left.length - right.length);
}

/** The entity workflow for one subscription; events about it are applied there, in order. */
export const subscriptionWorkflowId = (subscriptionId: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}subscription:${subscriptionId}`;
