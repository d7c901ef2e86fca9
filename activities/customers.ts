import type Stripe from 'stripe';
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, type Activities } from '../contracts';
import { storeCustomerIfNewer } from '../src/db/customers';
import { readEventBody } from './event-body';
import type { ActivityDeps } from './index';
import { callStripe } from './stripe';

/** The activities of `syncStripeCustomer` and `refreshStripeCustomer` (workflows/sync-stripe-customer.ts, workflows/refresh-stripe-customer.ts). */
export function createCustomerActivities({ db, stripe }: Pick<ActivityDeps, 'db' | 'stripe'>): Pick<Activities, 'storeCustomer' | 'storeCurrentCustomer'> {
  return {
    /** A customer's newest state, from the fields its event copied: nothing to read from the body. */
    storeCustomer: (update) => storeCustomerIfNewer(db, update),

    /**
     * A thin event's customer as Stripe has it now: the stored notification, parsed by stripe-node,
     * fetches its related object (`fetchRelatedObject`, which names the event in the request's
     * `Stripe-Request-Trigger`). The object, personal data and all, stays in this activity: the
     * workflow sees only whether it was stored.
     */
    async storeCurrentCustomer({ source, eventId, created }) {
      const body = await readEventBody(db, { source, eventId, step: 'customer' });
      const notification = stripe.parseEventNotificationWithoutVerification(JSON.stringify(body));
      if (!('fetchRelatedObject' in notification) || notification.related_object?.type !== 'customer')
        throw ApplicationFailure.nonRetryable(`Event ${eventId} (${notification.type}) names no customer to fetch.`, FailureType.STRIPE_INVALID_REQUEST);
      const fetchCustomer = notification.fetchRelatedObject as () => Promise<unknown>;
      const customer = (await callStripe(fetchCustomer)) as Partial<Stripe.Customer> & { id: string; deleted?: boolean };
      return storeCustomerIfNewer(db, {
        eventId,
        source,
        created,
        customer: {
          id: customer.id,
          balance: typeof customer.balance === 'number' ? customer.balance : null,
          currency: customer.currency ?? null,
          delinquent: customer.delinquent === true,
        },
        deleted: customer.deleted === true,
      });
    },
  };
}
