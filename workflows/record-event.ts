import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WebhookEvent } from '../src/providers/types';

const { recordArrival } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

export interface RecordedEvent {
  outcome: 'recorded';
  source: string;
  eventId: string;
  type: string;
  occurredAt: string;
}

/**
 * The event workflow every verified delivery starts, with the provider's event ID as its workflow ID.
 * It records what arrived and completes; business flows per event type build on it.
 */
export async function recordEvent(event: WebhookEvent): Promise<RecordedEvent> {
  await recordArrival({ source: event.source, eventId: event.id, type: event.type });
  return { outcome: 'recorded', source: event.source, eventId: event.id, type: event.type, occurredAt: event.occurredAt };
}
