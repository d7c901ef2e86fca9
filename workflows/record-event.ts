import type { WebhookEvent } from '../src/providers/types';
import { claim, db, trackProgress } from './steps';

export interface EventOutcome {
  outcome: string;
  source: string;
  eventId: string;
  type: string;
}

/**
 * Every event type no flow handles: claimed in the ledger, then completed as `ignored`, so it is
 * still visible in the Temporal UI and the ledger.
 */
export async function recordEvent(event: WebhookEvent): Promise<EventOutcome> {
  const progress = trackProgress(event);
  if (await claim(event, progress)) {
    await db.completeEvent({ source: event.source, eventId: event.id, status: 'ignored', outcome: { reason: 'no flow for this event type' } });
    progress.outcome = 'ignored';
  }
  return { outcome: progress.outcome!, source: event.source, eventId: event.id, type: event.type };
}
