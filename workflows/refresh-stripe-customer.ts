import { defineFlow, type EventOutcome, type WebhookEvent } from '../contracts';
import { externalActivity } from './activities';
import { fieldsOf, finish, handleEvent } from './event-frame';

export const refreshStripeCustomerFlow = defineFlow({
  workflow: refreshStripeCustomer,
  description: 'Stores a Stripe customer as Stripe has it now, for a thin event (it names the customer, not its state): once per burst (docs/entities.md).',
  handles: { stripe: ['v1.customer.created', 'v1.customer.updated', 'v1.customer.deleted'] },
  // A thin event carries no state to order: each fetch reads the current one, so a burst needs one
  // fetch, once the customer has been quiet for 5 seconds (or a minute after the burst began).
  key: { key: '/related_object/id', version: ['/created', '/id'], order: 'coalesce', quiet: '5s', ceiling: '1m' },
  versioning: { behavior: 'AUTO_UPGRADE', why: 'One read of Stripe and one database write; their retries (up to 23 hours) can cross a deploy.' },
  fields: { copy: { customerId: '/related_object/id', created: '/created' } },
});

/**
 * Stripe's thin `v1.customer.created|updated|deleted` (event destinations with thin payloads), in its
 * customer's turn once a burst has gathered: fetches the customer from Stripe as it is now
 * (`fetchRelatedObject`, the event named in the request) and stores it as `syncStripeCustomer`
 * stores a snapshot; the rest of the burst is superseded, with no read of its own.
 */
export async function refreshStripeCustomer(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(
    event,
    async (progress) => {
      const { customerId, created } = fieldsOf(event, refreshStripeCustomerFlow);
      const at = typeof created === 'string' ? Date.parse(created) : Number.NaN;
      if (typeof customerId !== 'string' || Number.isNaN(at))
        return finish(event, progress, 'no-customer', { status: 'completed', detail: { reason: 'the notification names no customer or no created time' } });
      const stored = await externalActivity.storeCurrentCustomer.executeWithOptions({ summary: `fetch and store customer ${customerId}` }, [
        { source: event.source, eventId: event.id, created: Math.floor(at / 1000) },
      ]);
      progress.done('customer');
      return finish(event, progress, stored ? 'stored' : 'not-newer', { status: 'completed', detail: { customerId } });
    },
    refreshStripeCustomerFlow,
  );
}
