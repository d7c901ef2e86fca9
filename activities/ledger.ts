import type { Database } from '../src/db/database';
import { claimEvent as claim, completeEvent as complete, type EventClaim, type EventStatus } from '../src/db/ledger';

export function createLedgerActivities({ db }: { db: Database }) {
  return {
    /** The first activity of every event workflow: `duplicate` means another run chain owns the event. */
    claimEvent(event: EventClaim): Promise<'claimed' | 'duplicate'> {
      return claim(db, event);
    },

    completeEvent(event: { source: string; eventId: string; status: EventStatus; outcome: unknown }): Promise<void> {
      return complete(db, event);
    },
  };
}
