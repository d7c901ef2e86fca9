import type { BodyField } from './events';
import type { EventWorkflowType } from './workflows';

/** A field copied from an event's body into its workflow's input. */
export type FieldValue = string | number | boolean | null;
export type EventFields = Record<string, FieldValue>;

/**
 * What one event workflow needs from the body, by JSON pointer (RFC 6901). `copy`: IDs, amounts,
 * currencies and statuses, copied into the input. `personal`: where the personal data its
 * activities use is; the input says only whether each is there (true or false), and activities
 * read the value from the stored body (`bodyField`).
 */
export interface EventFieldSpec {
  copy: Readonly<Record<string, string>>;
  personal?: Readonly<Record<string, string>>;
}

/** The fields each event workflow routes on; the receiver copies them, the workflows read `event.fields`. */
export const EVENT_FIELDS: { readonly [Type in EventWorkflowType]?: EventFieldSpec } = {
  chargeOrder: {
    copy: { orderId: '/data/orderId', amount: '/data/amount', currency: '/data/currency', customer: '/data/customer', paymentMethod: '/data/paymentMethod' },
    personal: { email: '/data/email' },
  },
  fulfilCheckout: {
    copy: {
      sessionId: '/data/object/id',
      orderId: '/data/object/metadata/order_id',
      amount: '/data/object/amount_total',
      currency: '/data/object/currency',
      paymentIntent: '/data/object/payment_intent',
    },
    personal: { email: '/data/object/customer_details/email' },
  },
  fulfilShopifyOrder: {
    copy: { orderId: '/id', orderName: '/name', amount: '/total_price', currency: '/currency' },
    personal: { email: '/email' },
  },
  applySubscriptionEvent: {
    copy: { created: '/created', subscriptionId: '/data/object/id', customer: '/data/object/customer', status: '/data/object/status' },
  },
};

/** A copied string longer than this is left out (and a flow that needs it refuses the event): IDs are far shorter. */
export const MAX_FIELD_LENGTH = 255;

/** The fields `EVENT_FIELDS` names for this workflow type, read from a parsed body. */
export function eventFields(workflowType: string, payload: unknown): EventFields {
  const spec = EVENT_FIELDS[workflowType as EventWorkflowType];
  const fields: EventFields = {};
  for (const [name, pointer] of Object.entries(spec?.copy ?? {})) {
    const value = readPointer(payload, pointer);
    if (value === null || typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_FIELD_LENGTH)) fields[name] = value;
  }
  for (const [name, pointer] of Object.entries(spec?.personal ?? {})) {
    const value = readPointer(payload, pointer);
    fields[name] = value !== undefined && value !== null && value !== '';
  }
  return fields;
}

/** A personal field of this workflow type's events, for an activity to read from the stored body. */
export function bodyField(workflowType: EventWorkflowType, name: string): BodyField {
  const pointer = EVENT_FIELDS[workflowType]?.personal?.[name];
  if (pointer === undefined) throw new TypeError(`EVENT_FIELDS.${workflowType} has no personal field "${name}".`);
  return { fromBody: pointer };
}

/** The value at a JSON pointer (RFC 6901: `/a/b/0`, `~1` for `/`, `~0` for `~`), or undefined; own properties only. */
export function readPointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let value = document;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
