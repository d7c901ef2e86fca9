import type { Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { writeOnce } from '../src/db/ledger';
import { insertRefund } from '../src/db/orders';
import { endWait, registerWait } from '../src/intake/waits';

/** A flow's waits for other events (src/intake/waits.ts), and what the checkout that waits for its refund records. */
export function createWaitActivities({ db }: { db: Database }): Pick<Activities, 'registerWaiter' | 'closeWaiter' | 'recordRefund'> {
  return {
    registerWaiter: (registration) => registerWait(db, registration),
    closeWaiter: ({ workflowId, wait }) => endWait(db, workflowId, wait),
    async recordRefund(refund) {
      await writeOnce(db, refund, async (tx) => {
        await insertRefund(tx, refund);
        return { externalId: refund.refundEventId, result: null };
      });
    },
  };
}
