import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { dbActivity } from './activities';
import { fieldsOf, finish, handleEvent } from './event-frame';

export const syncStripeCustomerFlow = defineFlow({
  workflow: syncStripeCustomer,
  description: "Stores a Stripe customer's newest balance and standing: a burst of its events is stored once, with the newest (docs/entities.md).",
  handles: { stripe: ['customer.created', 'customer.updated', 'customer.deleted'] },
  // An edit in the Dashboard, a balance adjustment or an invoice sends a customer's events in bursts,
  // and only its newest state matters: a burst is stored once the customer has been quiet for 5
  // seconds, or a minute after it began. Stripe's `created` (seconds) orders them, then the event ID.
  key: { key: '/data/object/id', version: ['/created', '/id'], order: 'coalesce', quiet: '5s', ceiling: '1m' },
  versioning: { behavior: 'AUTO_UPGRADE', why: 'One database write in its turn; a retry of it can cross a deploy.' },
  fields: {
    copy: {
      customerId: '/data/object/id',
      balance: '/data/object/balance',
      currency: '/data/object/currency',
      delinquent: '/data/object/delinquent',
      created: '/created',
    },
  },
  summary: ({ delinquent }) => (delinquent === true ? 'delinquent' : undefined),
});

/**
 * Stripe `customer.created|updated|deleted`, in its customer's turn once a burst has gathered: the
 * newest of the burst stores the customer's balance, currency and standing; every older one is
 * superseded. The database keeps the newest too, so no older event ever overwrites it.
 */
export async function syncStripeCustomer(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(
    event,
    async (progress) => {
      const fields = fieldsOf(event, syncStripeCustomerFlow);
      if (typeof fields.customerId !== 'string' || typeof fields.created !== 'number')
        return finish(event, progress, 'no-customer', { status: 'completed', detail: { reason: 'the body names no customer or no created time' } });
      const customer = {
        id: fields.customerId,
        balance: typeof fields.balance === 'number' ? fields.balance : null,
        currency: typeof fields.currency === 'string' ? fields.currency : null,
        delinquent: fields.delinquent === true,
      };
      const stored = await dbActivity.storeCustomer({
        eventId: event.id,
        source: event.source,
        created: fields.created,
        customer,
        deleted: event.type === 'customer.deleted',
      });
      progress.done('customer');
      return finish(event, progress, stored ? 'stored' : 'not-newer', { status: 'completed', detail: { customerId: customer.id } });
    },
    syncStripeCustomerFlow,
  );
}
