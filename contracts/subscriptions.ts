import { defineQuery, defineSignal } from '@temporalio/workflow';
import { MAX_FIELD_LENGTH } from './event-fields';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';
import type { Checked, SignalTarget } from './flows';

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
 * An operator's `apply` to a subscription's entity, checked: an update of a stored event (its
 * `source` and `eventId`, whose body the entity reads), about this entity's subscription, with
 * nothing else; the entity stores it only if it is newer than the last one applied.
 */
export function readSubscriptionUpdate(input: unknown, { workflowId }: SignalTarget): Checked<SubscriptionUpdate> {
  const refuse = (error: string): Checked<SubscriptionUpdate> => ({ ok: false, error });
  const example = '{"source":"stripe","eventId":"evt_…","created":1767225600,"subscription":{"id":"sub_…","status":"active"},"deleted":false}';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse(`the apply argument must be a JSON object such as ${example}`);
  const { source, eventId, created, subscription, deleted, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return refuse(`apply takes source, eventId, created, subscription and deleted, not ${Object.keys(rest).join(', ')}`);
  if (!isShortText(source)) return refuse('source must name the source whose stored event this is');
  if (!isShortText(eventId)) return refuse('eventId must be the ID of a stored event');
  if (!Number.isSafeInteger(created) || (created as number) < 0) return refuse("created must be the event's created time, whole seconds");
  if (typeof deleted !== 'boolean') return refuse('deleted must be true or false');
  if (typeof subscription !== 'object' || subscription === null || Array.isArray(subscription))
    return refuse('subscription must be a JSON object with id and status');
  const { id, customer, status, ...others } = subscription as Record<string, unknown>;
  if (Object.keys(others).length > 0) return refuse(`subscription takes id, customer and status, not ${Object.keys(others).join(', ')}`);
  if (!isShortText(id) || subscriptionWorkflowId(id) !== workflowId) return refuse(`subscription.id must be the subscription of ${workflowId}`);
  if (customer !== undefined && customer !== null && !isShortText(customer)) return refuse('subscription.customer must be a customer ID or null');
  if (!isShortText(status)) return refuse('subscription.status must be a Stripe subscription status');
  return {
    ok: true,
    value: { source, eventId, created: created as number, subscription: { id, status, ...(customer !== undefined && { customer }) }, deleted },
  };
}

const isShortText = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD_LENGTH;

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
