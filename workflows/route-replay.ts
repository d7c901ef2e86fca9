import { CancellationScope, continueAsNew, isCancellation, setCurrentDetails, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import {
  defineFlow,
  MAX_LISTED_FAILURES,
  replayBatchSize,
  routeReplayProgressQuery,
  type Activities,
  type RouteReplayInput,
  type RouteReplayProgress,
} from '../contracts';
import { jobActivity } from './activities';

export const replayRouteFlow = defineFlow({
  workflow: replayRoute,
  description:
    'A route replay an operator started (durable-webhooks routes replay --flow …): runs one flow over the stored events its routes send there and it has not run for, at most at its rate.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Reads a month of events at an operator-chosen rate, for minutes to hours; a deploy during it must not strand it.',
  },
});

/**
 * Reads the window's stored events in (source, event ID) order, a batch at a time, and starts the
 * flow for each its routes send there, no faster than `rate`. Each run's ID is the event's and the
 * flow's (`<event>~<flow>`), so a second replay, or this one resumed, starts nothing twice. Its
 * progress is the `routeReplayProgress` query's answer and its result; cancelled, it finishes the
 * batch under way and ends `stopped`. It continues as new when its history grows long.
 */
export async function replayRoute(input: RouteReplayInput, carried?: RouteReplayProgress): Promise<RouteReplayProgress> {
  const progress: RouteReplayProgress = carried ?? { state: 'running', read: 0, started: 0, skipped: {}, failed: 0, failures: [], after: null };
  setHandler(routeReplayProgressQuery, () => progress);
  const size = replayBatchSize(input.rate);
  try {
    for (;;) {
      if (CancellationScope.current().consideredCancelled) throw new CancelledBetweenBatches();
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof replayRoute>(input, progress);
      const { flow, window, sources } = input;
      const { results, last } = await CancellationScope.nonCancellable(() =>
        jobActivity.replayRouteBatch({ flow, window, sources, after: progress.after, limit: size }),
      );
      if (last === null) break;
      count(progress, results);
      progress.after = last;
      setCurrentDetails(`**Now:** ${input.flow}: ${progress.read} events read, ${progress.started} runs started`);
      if (input.rate !== undefined) await sleep((results.length / input.rate) * 1000);
    }
    progress.state = 'completed';
  } catch (error) {
    if (!isCancellation(error) && !(error instanceof CancelledBetweenBatches)) throw error;
    progress.state = 'stopped';
  }
  setCurrentDetails(`**${progress.state}:** ${progress.started} started, ${progress.failed} failed of ${progress.read} events read`);
  return progress;
}

/** The job was cancelled while a batch ran; it stops before the next. */
class CancelledBetweenBatches extends Error {}

function count(progress: RouteReplayProgress, results: Awaited<ReturnType<Activities['replayRouteBatch']>>['results']): void {
  for (const result of results) {
    progress.read++;
    if (result.outcome === 'done') progress.started++;
    else if (result.outcome === 'skipped') progress.skipped[result.detail] = (progress.skipped[result.detail] ?? 0) + 1;
    else {
      progress.failed++;
      if (progress.failures.length < MAX_LISTED_FAILURES) progress.failures.push({ eventId: result.eventId, error: result.detail });
    }
  }
}
