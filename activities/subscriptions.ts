import { applySignal, readPointer, subscriptionWorkflowId, type Activities } from '../contracts';
import { subscriptionEntityFlow } from '../src/flows';
import { bodyRead, holdBodyForReader } from '../src/db/retention';
import { storeIfNewer } from '../src/db/subscriptions';
import { readEventBody } from './event-body';
import type { ActivityDeps } from './index';

export function createSubscriptionActivities({
  db,
  temporal,
  taskQueue,
}: Pick<ActivityDeps, 'db' | 'temporal' | 'taskQueue'>): Pick<Activities, 'forwardSubscriptionUpdate' | 'storeSubscription' | 'skipSubscriptionUpdate'> {
  return {
    /**
     * Signal-with-start of the subscription's entity workflow. A repeat (activity retry, reset)
     * delivers the same update again, which the entity ignores as not newer than the last applied.
     */
    async forwardSubscriptionUpdate(update) {
      const workflowId = subscriptionWorkflowId(update.subscription.id);
      // The entity reads the body after this event completes: retention keeps it until then.
      if (update.source) await holdBodyForReader(db, { source: update.source, eventId: update.eventId });
      await temporal.workflow.signalWithStart(subscriptionEntityFlow.workflow, {
        workflowId,
        taskQueue,
        args: [{ subscriptionId: update.subscription.id }],
        signal: applySignal,
        signalArgs: [update],
        staticSummary: `stripe · subscription · ${update.subscription.id}`,
      });
      return workflowId;
    },

    /**
     * The database keeps the order even across entity runs and redeliveries. The subscription object
     * comes from the event's stored body; an update sent before bodies were stored carries it.
     */
    async storeSubscription(update) {
      if (!update.source) return storeIfNewer(db, update, update.subscription);
      const data = readPointer(await readEventBody(db, { source: update.source, eventId: update.eventId, step: 'subscription' }), '/data/object');
      const stored = await storeIfNewer(db, update, data);
      await bodyRead(db, { source: update.source, eventId: update.eventId });
      return stored;
    },

    /** An update the entity found older than the last one applied: its body is no longer needed. */
    async skipSubscriptionUpdate(update) {
      if (update.source) await bodyRead(db, { source: update.source, eventId: update.eventId });
    },
  };
}
