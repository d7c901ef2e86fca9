import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Activities, BackfillCounts } from '../contracts';
import type { ListedEvent } from '../src/backfill/backfill';
import { runBackfill } from '../src/backfill/run';
import type { CommonConfig } from '../src/config';
import type { SourceConfig } from '../src/providers/source';
import { OperationRejectedError } from '../src/core/errors';
import type { Database } from '../src/db/database';

/** What a reconciliation attempt heartbeats: its counts so far and the last event it settled. */
interface Progress {
  counts: BackfillCounts;
  lastSettled?: string;
}

export function createReconcileActivities({
  db,
  temporal,
  config,
  sources = () => [],
}: {
  db: Database;
  temporal: Client;
  config: CommonConfig;
  sources?: () => readonly SourceConfig[];
}): Pick<Activities, 'reconcileProvider'> {
  return {
    /**
     * The backfill, run by the worker for a schedule. After each event it heartbeats its counts and
     * the event's ID; a retry (a worker crash) lists again and skips to after that event, adding to
     * the counts it had. Events newer than the restart's first page are left to the next run.
     */
    async reconcileProvider({ provider, since, source, until, types, mode = 'start' }) {
      const resumed = Context.current().info.heartbeatDetails as Progress | undefined;
      try {
        return await runBackfill(
          { provider, source, since: new Date(since), until: until === undefined ? undefined : new Date(until), types, mode },
          { config, client: temporal, db, sources: sources(), from: (events) => after(events, resumed?.lastSettled), counts: resumed?.counts },
          (line, counts) => Context.current().heartbeat({ counts, lastSettled: line.eventId } satisfies Progress),
        );
      } catch (error) {
        // A request that cannot run (no key, a window the provider does not keep) will not on retry.
        if (error instanceof OperationRejectedError) throw ApplicationFailure.nonRetryable(error.message, 'BackfillRejected');
        throw error;
      }
    },
  };
}

/** The events after `eventId` in the listing's order (all of them without one). */
async function* after(events: AsyncIterable<ListedEvent>, eventId: string | undefined): AsyncGenerator<ListedEvent> {
  let passed = eventId === undefined;
  for await (const event of events) {
    if (passed) yield event;
    else passed = event.id === eventId;
  }
}
