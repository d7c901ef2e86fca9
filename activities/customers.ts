import type { Activities } from '../contracts';
import { storeCustomerIfNewer } from '../src/db/customers';
import type { ActivityDeps } from './index';

/** The activities of `syncStripeCustomer` (workflows/sync-stripe-customer.ts). */
export function createCustomerActivities({ db }: Pick<ActivityDeps, 'db'>): Pick<Activities, 'storeCustomer'> {
  return {
    /** A customer's newest state, from the fields its event copied: nothing to read from the body. */
    storeCustomer: (update) => storeCustomerIfNewer(db, update),
  };
}
