import type { BodyField, BodyStep, Text } from './events';

export interface EmailInput extends BodyStep {
  /** The provider's idempotency key: the event ID, or `<event ID>:<step>` where one event sends several. */
  idempotencyKey: string;
  /** An address from configuration, or the customer's, read from the body. */
  to: string | BodyField;
  subject: Text;
  text: Text;
}
