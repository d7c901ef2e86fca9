import { CancellationScope, isCancellation, setCurrentDetails, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import {
  bulkBatchSize,
  bulkProgressQuery,
  defineFlow,
  MAX_BULK_EVENTS,
  MAX_LISTED_FAILURES,
  type BulkInput,
  type BulkItemResult,
  type BulkProgress,
} from '../contracts';
import { jobActivity } from './activities';

export const bulkActionFlow = defineFlow({
  workflow: bulkAction,
  description:
    'A bulk action an operator started (durable-webhooks events retry --source …): acts on every matching event at most at its rate, skips what it must not touch, and stops when cancelled.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Acts on up to 10,000 events at an operator-chosen rate, for minutes to hours; a deploy during it must not strand it.',
  },
});

/**
 * Lists the events the filter matches (their current runs, once, at the start; at most the count
 * the operator confirmed), then acts on them
 * in batches, no faster than `rate`; its progress is the `bulkProgress` query's answer and its
 * result. Cancelled (`durable-webhooks jobs stop`), it finishes the batch under way, so every action
 * taken is counted, and ends `stopped`.
 */
export async function bulkAction(input: BulkInput): Promise<BulkProgress> {
  const progress: BulkProgress = { state: 'listing', total: 0, done: 0, skipped: {}, failed: 0, failures: [] };
  setHandler(bulkProgressQuery, () => progress);
  const jobId = workflowInfo().workflowId;
  try {
    setCurrentDetails(`**Now:** listing the events to ${input.action}`);
    const eventIds = await jobActivity.bulkMatches({ filter: input.filter, limit: Math.min(input.limit ?? MAX_BULK_EVENTS, MAX_BULK_EVENTS) });
    progress.total = eventIds.length;
    progress.state = 'running';
    const size = bulkBatchSize(input.rate);
    for (let next = 0; next < eventIds.length; next += size) {
      if (CancellationScope.current().consideredCancelled) throw new CancelledBetweenBatches();
      const batch = eventIds.slice(next, next + size);
      const apply = () =>
        jobActivity.bulkApply({ jobId, action: input.action, eventIds: batch, to: input.to, reason: input.reason, signal: input.signal, by: input.by });
      count(progress, await CancellationScope.nonCancellable(apply));
      setCurrentDetails(`**Now:** ${input.action} ${progress.done + progress.failed + skippedCount(progress)} of ${progress.total}`);
      // The batch's share of a second at the rate: never faster than it, a little slower by the batch's own time.
      if (input.rate !== undefined) await sleep((batch.length / input.rate) * 1000);
    }
    progress.state = 'completed';
  } catch (error) {
    if (!isCancellation(error) && !(error instanceof CancelledBetweenBatches)) throw error;
    progress.state = 'stopped';
  }
  setCurrentDetails(`**${progress.state}:** ${progress.done} done, ${skippedCount(progress)} skipped, ${progress.failed} failed of ${progress.total}`);
  return progress;
}

/** The job was cancelled while a batch ran; it stops before the next. */
class CancelledBetweenBatches extends Error {}

function count(progress: BulkProgress, results: BulkItemResult[]): void {
  for (const result of results) {
    if (result.outcome === 'done') progress.done++;
    else if (result.outcome === 'skipped') progress.skipped[result.detail] = (progress.skipped[result.detail] ?? 0) + 1;
    else {
      progress.failed++;
      if (progress.failures.length < MAX_LISTED_FAILURES) progress.failures.push({ eventId: result.eventId, error: result.detail });
    }
  }
}

function skippedCount(progress: BulkProgress): number {
  return Object.values(progress.skipped).reduce((sum, each) => sum + each, 0);
}
