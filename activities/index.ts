import { log } from '@temporalio/activity';

/**
 * The worker's activities, one area per file as they grow, created from injected clients so tests
 * can point them anywhere.
 */
export function createActivities() {
  return {
    /** Writes the arrival of an event to the worker's log, where operators follow processing. */
    async recordArrival(event: { source: string; eventId: string; type: string }): Promise<void> {
      log.info('webhook event recorded', event);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
