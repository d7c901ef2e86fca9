import type { StepKey } from './events';

export interface EmailInput extends StepKey {
  /** The provider's idempotency key: the event ID, or `<event ID>:<step>` where one event sends several. */
  idempotencyKey: string;
  to: string;
  subject: string;
  text: string;
}
