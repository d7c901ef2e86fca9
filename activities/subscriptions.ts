import type { Client } from '@temporalio/client';
import { applySignal, subscriptionWorkflowId, WorkflowType, type Activities, type Workflows } from '../contracts';
import type { Database } from '../src/db/database';
import { storeIfNewer } from '../src/db/subscriptions';

export function createSubscriptionActivities({ db, temporal, taskQueue }: { db: Database; temporal: Client; taskQueue: string }): Pick<Activities, 'forwardSubscriptionUpdate' | 'storeSubscription'> {
  return {
    /**
     * Signal-with-start of the subscription's entity workflow. A repeat (activity retry, reset)
     * delivers the same update again, which the entity ignores as not newer than the last applied.
     */
    async forwardSubscriptionUpdate(update) {
      const workflowId = subscriptionWorkflowId(update.subscription.id);
      await temporal.workflow.signalWithStart<Workflows['subscriptionEntity'], [typeof update]>(WorkflowType.subscriptionEntity, {
        workflowId,
        taskQueue,
        args: [{ subscriptionId: update.subscription.id }],
        signal: applySignal,
        signalArgs: [update],
        staticSummary: `stripe · subscription · ${update.subscription.id}`,
      });
      return workflowId;
    },

    /** The database keeps the order even across entity runs and redeliveries. */
    storeSubscription: (update) => storeIfNewer(db, update),
  };
}
