import type { EventOutcome, WebhookEvent } from '../contracts';
import { claim, duplicate, finish, trackProgress } from './steps';

/**
 * Every event type no flow handles: claimed in the ledger, then completed as `ignored`, so it is
 * still visible in the Temporal UI and the ledger.
 */
export async function recordEvent(event: WebhookEvent): Promise<EventOutcome> {
  const progress = trackProgress(event);
  if (!(await claim(event, progress))) return duplicate(event, progress);
  return finish(event, progress, 'ignored', { status: 'ignored', detail: { reason: 'no flow for this event type' } });
}
