import { condition, continueAsNew, patched, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  applySignal,
  defineFlow,
  flowSignal,
  isNewerUpdate,
  readSubscriptionUpdate,
  subscriptionStateQuery,
  type EventOutcome,
  type SubscriptionEntityInput,
  type SubscriptionState,
  type SubscriptionUpdate,
  type WebhookEvent,
} from '../contracts';
import { dbActivity } from './activities';
import { fieldsOf, finish, handleEvent } from './event-frame';

export const applySubscriptionEventFlow = defineFlow({
  workflow: applySubscriptionEvent,
  description: "Stores a subscription's newest state: its events take turns per subscription, newest first (docs/entities.md).",
  handles: { stripe: ['customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted'] },
  // Stripe's `created` (seconds), then the event ID in byte order for two events of one second, as
  // the subscriptions table orders them (storeIfNewer).
  key: { key: '/data/object/id', version: ['/created', '/id'], order: 'latest' },
  versioning: { behavior: 'AUTO_UPGRADE', why: 'Hands the event to its subscription and ends in seconds; a retry of the hand-over can cross a deploy.' },
  fields: { copy: { created: '/created', subscriptionId: '/data/object/id', customer: '/data/object/customer', status: '/data/object/status' } },
  summary: ({ status }) => (typeof status === 'string' ? status : undefined),
});

export const subscriptionEntityFlow = defineFlow({
  workflow: subscriptionEntity,
  description: 'One per subscription, for events started before keys: applies their updates in order and stores the newest.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Lives as long as its subscription (continue-as-new keeps its history short), so it can only ever run on the current build.',
  },
  signals: [flowSignal(applySignal, readSubscriptionUpdate, { description: 'applies an update of a stored event, if it is newer than the last one applied' })],
  queries: [subscriptionStateQuery],
});

/**
 * Stripe `customer.subscription.created|updated|deleted`: idempotency does not order events, so
 * each one runs in its subscription's turn, the newest first, and stores the subscription; one older
 * than the state stored is superseded. Events started before keys handed their update to the
 * subscription's entity workflow instead, which applied them in order.
 */
export async function applySubscriptionEvent(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(
    event,
    async (progress) => {
      const fields = fieldsOf(event, applySubscriptionEventFlow);
      const subscription = { id: fields.subscriptionId as string, customer: fields.customer as string | null, status: fields.status as string };
      if (patched(SUBSCRIPTIONS_KEYED)) {
        const stored = await dbActivity.storeSubscription({
          eventId: event.id,
          source: event.source,
          created: fields.created as number,
          subscription,
          deleted: event.type === 'customer.subscription.deleted',
        });
        progress.done('subscription');
        return finish(event, progress, stored ? 'stored' : 'not-newer', { status: 'completed', detail: { subscriptionId: subscription.id } });
      }
      const entity = await dbActivity.forwardSubscriptionUpdate({
        eventId: event.id,
        created: fields.created as number,
        // The entity's activity reads the whole object from the body store; an event started before
        // bodies were stored carries it instead.
        ...(event.payload === undefined
          ? { source: event.source, subscription }
          : { subscription: (event.payload as { data: { object: SubscriptionUpdate['subscription'] } }).data.object }),
        deleted: event.type === 'customer.subscription.deleted',
      });
      progress.done('forwarded');
      return finish(event, progress, 'forwarded', { status: 'completed', detail: { entity } });
    },
    applySubscriptionEventFlow,
  );
}

const SUBSCRIPTIONS_KEYED = 'subscriptions-keyed';

const RELEASE_SKIPPED_BODIES = 'release-skipped-bodies';

/** How long an entity with nothing to apply stays open before it completes. */
const IDLE_TIMEOUT = '1 day';

/**
 * One per subscription (`durable-webhooks:subscription:<id>`), started by signal-with-start. Applies
 * an update only if it is newer than the last one applied (`isNewerUpdate`: by `created`, then event
 * ID in byte order); older ones and repeats are ignored. The database applies the same rule, so the order holds across entity runs too.
 */
export async function subscriptionEntity(input: SubscriptionEntityInput): Promise<SubscriptionState> {
  const state: SubscriptionState = { subscriptionId: input.subscriptionId, last: input.last ?? null, status: null, updatesSeen: 0 };
  const pending: SubscriptionUpdate[] = [];
  setHandler(applySignal, (update) => void pending.push(update));
  setHandler(subscriptionStateQuery, () => state);

  const show = (waiting: string) =>
    setCurrentDetails(
      `**Status:** ${state.status ?? 'unknown'} · **last applied:** ${state.last?.eventId ?? 'none'} · **updates seen:** ${state.updatesSeen}\n\n**Waiting for:** ${waiting}`,
    );

  for (;;) {
    show(`the next update (completes after ${IDLE_TIMEOUT} idle)`);
    // An update that arrives in the same workflow task as the idle timeout is still applied.
    if (!(await condition(() => pending.length > 0, IDLE_TIMEOUT)) && pending.length === 0) break;
    const update = pending.shift()!;
    state.updatesSeen++;
    if (state.last && !isNewerUpdate(update, state.last)) {
      // Entities that ran before retention waited for their reading skip without saying so.
      if (patched(RELEASE_SKIPPED_BODIES)) await dbActivity.skipSubscriptionUpdate(update);
      continue;
    }
    show(`storing ${update.eventId}`);
    await dbActivity.storeSubscription(update);
    state.last = { created: update.created, eventId: update.eventId };
    state.status = update.deleted ? 'deleted' : update.subscription.status;
    if (pending.length === 0 && workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof subscriptionEntity>({ subscriptionId: state.subscriptionId, last: state.last });
    }
  }
  return state;
}
