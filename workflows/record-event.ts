import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { finish, handleEvent } from './event-frame';

export const recordEventFlow = defineFlow({
  workflow: recordEvent,
  description: 'Records an event no other flow handles, completed as ignored (the default for every type not routed).',
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'One ledger step, but its next task after a deploy may find no worker of the build that started it; whichever build is current finishes it.',
  },
  // It records whatever type it is given and acts on none.
  decidesFromBody: true,
});

/**
 * Every event type no flow handles: claimed in the ledger, then completed as `ignored`, so it is
 * still visible in the Temporal UI and the ledger.
 */
export async function recordEvent(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, (progress) => finish(event, progress, 'ignored', { status: 'ignored', detail: { reason: 'no flow for this event type' } }));
}
