import type { EventProgress } from '../../contracts';
import type { Erasure } from '../db/erasure';
import type { LedgerRecord } from '../db/ledger';
import type { EventSummary } from './visibility';

// What operators see of one event, by event ID: from Temporal, the ledger and the body store.

/** Where an event stands that has no workflow: stored and held, ignored by a route or filtered by its filters, or not started yet (dead-lettered, when Temporal kept refusing it). */
export type InboxStatusName = 'held' | 'ignored' | 'filtered' | 'not started' | 'dead-lettered';

export interface EventView extends Omit<EventSummary, 'status'> {
  status: EventSummary['status'] | InboxStatusName;
  summary: string | null;
  /** The `status` query's answer; null when no worker answered it. */
  progress: EventProgress | null;
  /** The event's claim and recorded steps in the ledger; null without database access or before the claim. */
  ledger: LedgerRecord | null;
  /** Who erased the event's personal data, when and why; null when it was not erased (or without database access). */
  erasure: Erasure | null;
  /** The stored body: its size and hash, and whether it is still there; null without database access or when none was stored. */
  body: BodyView | null;
  result: unknown;
  /** The failure and its causes, outermost first, as `Type: message`. */
  failure: string[] | null;
  /** Activities scheduled or running now: their attempt and, when retrying, the last attempt's failure. */
  pendingActivities: PendingActivity[];
  uiUrl: string;
}

export interface PendingActivity {
  activityType: string;
  attempt: number;
  lastFailure: string | null;
}

export interface BodyView {
  state: 'stored' | 'erased' | 'purged';
  bytes: number;
  sha256: string;
  receivedAt: string;
  /** When it was purged, past BODY_RETENTION. */
  purgedAt: string | null;
}
