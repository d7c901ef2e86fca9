import type { Client } from '@temporalio/client';
import type { Database } from '../src/db/database';

/** One Stripe subscription event, as the entity workflow applies it. */
export interface SubscriptionUpdate {
  eventId: string;
  /** The event's `created`, seconds: with the event ID, it orders updates. */
  created: number;
  subscription: { id: string; customer?: string | null; status: string } & Record<string, unknown>;
  deleted: boolean;
}

/** The entity workflow for one subscription; events about it are applied there, in order. */
export const subscriptionWorkflowId = (subscriptionId: string) => `subscription:${subscriptionId}`;

export function createSubscriptionActivities({ db, temporal, taskQueue }: { db: Database; temporal: Client; taskQueue: string }) {
  return {
    /**
     * Signal-with-start of the subscription's entity workflow. A repeat (activity retry, reset)
     * delivers the same update again, which the entity ignores as not newer than the last applied.
     */
    async forwardSubscriptionUpdate(update: SubscriptionUpdate): Promise<string> {
      const workflowId = subscriptionWorkflowId(update.subscription.id);
      await temporal.workflow.signalWithStart('subscriptionEntity', {
        workflowId,
        taskQueue,
        args: [{ subscriptionId: update.subscription.id }],
        signal: 'apply',
        signalArgs: [update],
        staticSummary: `stripe · subscription · ${update.subscription.id}`,
      });
      return workflowId;
    },

    /**
     * Stores the subscription's state if this update is newer than the stored one (created, then
     * event ID): the database keeps the order even across entity runs and redeliveries.
     */
    async storeSubscription(update: SubscriptionUpdate): Promise<boolean> {
      const { subscription } = update;
      const { rows } = await db.query(
        `INSERT INTO subscriptions (id, customer, status, data, last_event_id, last_event_created)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET customer = EXCLUDED.customer, status = EXCLUDED.status, data = EXCLUDED.data,
           last_event_id = EXCLUDED.last_event_id, last_event_created = EXCLUDED.last_event_created, updated_at = now()
         WHERE (subscriptions.last_event_created, subscriptions.last_event_id) < (EXCLUDED.last_event_created, EXCLUDED.last_event_id)
         RETURNING id`,
        [subscription.id, subscription.customer ?? null, update.deleted ? 'deleted' : subscription.status, JSON.stringify(subscription), update.eventId, update.created],
      );
      return rows.length > 0;
    },
  };
}
