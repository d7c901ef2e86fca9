import { setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { defineFlow, type BackfillCounts, type ReconcileInput } from '../contracts';
import { listingActivity } from './activities';

export const reconcileFlow = defineFlow({
  workflow: reconcile,
  description: "A scheduled reconciliation run: starts what the provider's events API has and the receiver never got.",
  internal: true,
  versioning: { behavior: 'AUTO_UPGRADE', why: "A scheduled run that pages through a provider's events for minutes; a deploy during it must not strand it." },
});

/**
 * A scheduled reconciliation run (`reconcile-stripe`, `reconcile-github`): starts every event of the
 * lookback window that the provider's API has and the receiver never got, and returns the counts.
 */
export async function reconcile(input: ReconcileInput): Promise<BackfillCounts> {
  const since = new Date(workflowInfo().runStartTime.getTime() - input.lookbackMs).toISOString();
  setCurrentDetails(`**Now:** listing ${input.provider} events since ${since} and starting the missing ones`);
  return listingActivity.reconcileProvider({ provider: input.provider, since });
}
