import type { WebhookEvent } from '../src/providers/types';
import { claim, db, finish, trackProgress, type EventOutcome } from './steps';

/**
 * Every event type no flow handles: claimed in the ledger, then completed as `ignored`, so it is
 * still visible in the Temporal UI and the ledger.
 */
export async function recordEvent(event: WebhookEvent): Promise<EventOutcome> {
  const progress = trackProgress(event);
  if (!(await claim(event, progress))) return finish(event, progress, 'duplicate');
  await db.completeEvent({ source: event.source, eventId: event.id, status: 'ignored', outcome: { reason: 'no flow for this event type' } });
  return finish(event, progress, 'ignored');
}
