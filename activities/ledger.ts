import type { Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { claimEvent, completeEvent } from '../src/db/ledger';

export function createLedgerActivities({ db }: { db: Database }): Pick<Activities, 'claimEvent' | 'completeEvent'> {
  return {
    claimEvent: (claim) => claimEvent(db, claim),
    completeEvent: (completion) => completeEvent(db, completion),
  };
}
