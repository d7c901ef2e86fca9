import type { Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { writeOnce } from '../src/db/ledger';
import { upsertOrder } from '../src/db/orders';
import { fieldText, readEventBody } from './event-body';

export function createOrderActivities({ db }: { db: Database }): Pick<Activities, 'saveOrder'> {
  return {
    /**
     * Writes the order row and the step's ledger row in one transaction; the same step of the same
     * event never writes twice, it returns what the first attempt stored.
     */
    async saveOrder({ order: { customerEmail, ...order }, ...step }) {
      const email = customerEmail && fieldText(await readEventBody(db, step), customerEmail);
      const { result } = await writeOnce(db, step, async (tx) => {
        const { fulfilledBy } = await upsertOrder(tx, step.source, step.eventId, { ...order, customerEmail: email || null });
        // The ledger and the workflow get the order without the customer's email.
        return { externalId: order.id, result: { ...order, ...(fulfilledBy !== null && { fulfilledBy }) } };
      });
      return result;
    },
  };
}
