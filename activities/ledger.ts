import type { Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { claimEvent, completeEvent } from '../src/db/ledger';
import { count } from './metrics';

export function createLedgerActivities({ db }: { db: Database }): Pick<Activities, 'claimEvent' | 'completeEvent'> {
  return {
    async claimEvent(claim) {
      const result = await claimEvent(db, claim);
      if (result !== 'claimed') count('duplicates', { kind: result });
      return result;
    },
    completeEvent: (completion) => completeEvent(db, completion),
  };
}
