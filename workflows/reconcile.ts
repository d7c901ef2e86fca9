import { proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { defineFlow, type Activities, type BackfillCounts, type ReconcileInput } from '../contracts';

export const reconcileFlow = defineFlow({
  workflow: reconcile,
  description: "A scheduled reconciliation run: starts what the provider's events API has and the receiver never got.",
  internal: true,
});

/**
 * One listing can take a while: it heartbeats after every event, so a worker that dies is noticed
 * within 10 s, and the retry resumes after the last event it settled.
 */
const { reconcileProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '5 seconds', maximumAttempts: 5 },
});

/**
 * A scheduled reconciliation run (`reconcile-stripe`, `reconcile-github`): starts every event of the
 * lookback window that the provider's API has and the receiver never got, and returns the counts.
 */
export async function reconcile(input: ReconcileInput): Promise<BackfillCounts> {
  const since = new Date(workflowInfo().runStartTime.getTime() - input.lookbackMs).toISOString();
  setCurrentDetails(`**Now:** listing ${input.provider} events since ${since} and starting the missing ones`);
  return reconcileProvider({ provider: input.provider, since });
}
