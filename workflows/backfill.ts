import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import { defineFlow, type Activities, type BackfillCounts, type BackfillInput } from '../contracts';

export const backfillFlow = defineFlow({
  workflow: backfill,
  description: 'A backfill an operator asked for (POST /admin/backfill): one at a time per source, its counts as the result.',
  internal: true,
});

/** The listing heartbeats after every event and resumes after the last one it settled, as a reconciliation does. */
const { reconcileProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '5 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['BackfillRejected'] },
});

/** Lists the provider's events over the window and starts (or counts, or has GitHub redeliver) the missing ones. */
export async function backfill(input: BackfillInput): Promise<BackfillCounts> {
  setCurrentDetails(`**Now:** listing ${input.provider} events since ${input.since}${input.until ? ` until ${input.until}` : ''} (${input.mode})`);
  return reconcileProvider(input);
}
