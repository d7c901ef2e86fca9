import { setCurrentDetails } from '@temporalio/workflow';
import { defineFlow, type BackfillCounts, type BackfillInput } from '../contracts';
import { listingActivity } from './activities';

export const backfillFlow = defineFlow({
  workflow: backfill,
  description: 'A backfill an operator asked for (POST /admin/backfill): one at a time per source, its counts as the result.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: "Pages through up to 30 days of a provider's events, for minutes to hours; its heartbeated listing resumes on the current build.",
  },
});

/** Lists the provider's events over the window and starts (or counts, or has GitHub redeliver) the missing ones. */
export async function backfill(input: BackfillInput): Promise<BackfillCounts> {
  setCurrentDetails(`**Now:** listing ${input.provider} events since ${input.since}${input.until ? ` until ${input.until}` : ''} (${input.mode})`);
  return listingActivity.reconcileProvider(input);
}
