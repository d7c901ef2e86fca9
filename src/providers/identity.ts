import { isInternalWorkflowId, eventWorkflowId, INTERNAL_WORKFLOW_ID_PREFIX, SUBSCRIBER_SEPARATOR } from '../../contracts';
import { flowNamed } from '../flows';
import { MalformedEventError } from '../core/delivery-errors';
import type { ProviderAdapter, VerifiedEvent } from './types';

/**
 * An event ID becomes a workflow ID (Temporal's limit is 1,000 bytes by default, 255 on some SQL
 * setups) and, behind a source prefix of at most 32 characters and a step suffix, every Stripe and
 * email idempotency key (Stripe's limit is 255 characters). Real IDs are far shorter: Stripe's and
 * Svix's about 30 characters, GitHub's 36.
 */
export const MAX_EVENT_ID_LENGTH = 192;

/** A type is a search attribute value and a lookup key; providers' longest are under 60 characters. */
export const MAX_EVENT_TYPE_LENGTH = 128;

// Printable ASCII without space: one byte per character, nothing that reads differently in a log.
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * Checks the sender-chosen text that names an event before anything is started with it, and throws
 * `MalformedEventError` (400) naming the field and the limit: an event that cannot be started must
 * be refused as bad input, not answered 500 on every retry.
 */
export function checkEventIdentity(
  event: Pick<VerifiedEvent, 'id' | 'type'>,
  adapter: ProviderAdapter,
  source: { name: string; workflowIdPrefix: string },
): void {
  check(event.id, `event ID (${adapter.fields.id})`, MAX_EVENT_ID_LENGTH, source.name);
  check(event.type, `event type (${adapter.fields.type})`, MAX_EVENT_TYPE_LENGTH, source.name);
  if (isInternalWorkflowId(eventWorkflowId(source.workflowIdPrefix, event.id))) {
    throw new MalformedEventError(
      `The event ID (${adapter.fields.id}) may not start with "${INTERNAL_WORKFLOW_ID_PREFIX}", which is reserved for durable-webhooks' own workflows.`,
      { source: source.name },
    );
  }
  // `<event>~<flow>` is a route's subscriber run of an event (docs/flows.md#routes): a sender may not take one first.
  const flow = event.id.slice(event.id.lastIndexOf(SUBSCRIBER_SEPARATOR) + 1);
  if (event.id.includes(SUBSCRIBER_SEPARATOR) && flowNamed(flow)) {
    throw new MalformedEventError(
      `The event ID (${adapter.fields.id}) may not end with "${SUBSCRIBER_SEPARATOR}${flow}", the form of a flow's run of another event (<event>${SUBSCRIBER_SEPARATOR}<flow>).`,
      { source: source.name },
    );
  }
}

function check(value: string, field: string, limit: number, source: string): void {
  if (value.length > limit)
    throw new MalformedEventError(`The ${field} is ${value.length} characters long; at most ${limit} are accepted.`, { source: source });
  if (!PRINTABLE.test(value)) throw new MalformedEventError(`The ${field} may contain only printable ASCII characters, without spaces.`, { source: source });
}
