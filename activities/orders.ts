import type { Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { writeOnce } from '../src/db/ledger';
import { upsertOrder } from '../src/db/orders';

export function createOrderActivities({ db }: { db: Database }): Pick<Activities, 'saveOrder'> {
  return {
    /**
     * Writes the order row and the step's ledger row in one transaction; the same step of the same
     * event never writes twice, it returns what the first attempt stored.
     */
    async saveOrder({ order, ...step }) {
      const { result } = await writeOnce(db, step, async (tx) => {
        await upsertOrder(tx, step.source, step.eventId, order);
        return { externalId: order.id, result: order };
      });
      return result;
    },
  };
}
