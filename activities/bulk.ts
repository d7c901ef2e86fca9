import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Activities, BulkItemResult } from '../contracts';
import type { Database } from '../src/db/database';
import { replayRouteBatch } from '../src/intake/route-replay';
import { EventOperations } from '../src/temporal/operations';
import type { EventFilter, EventStatusName } from '../src/temporal/visibility';

/** What `bulkApply` heartbeats: the results so far, so a retry (a worker that died) resumes after them. */
interface Progress {
  results: BulkItemResult[];
}

/** A bulk job's listing and acting, through the operations the CLI and `/admin` use on one event. */
export function createBulkActivities({
  db,
  temporal,
  taskQueue,
}: {
  db: Database;
  temporal: Client;
  taskQueue: string;
}): Pick<Activities, 'bulkMatches' | 'bulkApply' | 'replayRouteBatch'> {
  const operations = new EventOperations(temporal, { uiUrl: '', db });
  return {
    async bulkMatches({ filter, limit }) {
      const matches = await operations.list({ ...filter, status: filter.status as EventStatusName | undefined } satisfies EventFilter, limit);
      return matches.map((event) => event.eventId);
    },

    async bulkApply({ jobId, action, eventIds, to, reason, signal, by }) {
      const results = [...((Context.current().info.heartbeatDetails as Progress | undefined)?.results ?? [])];
      for (const eventId of eventIds.slice(results.length)) {
        results.push(
          await operations.apply(action, eventId, { to, reason: `${reason} (bulk job ${jobId}, by ${by})`, signal, requestId: `${jobId}:${eventId}` }),
        );
        Context.current().heartbeat({ results } satisfies Progress);
      }
      return results;
    },

    async replayRouteBatch(input) {
      const done = (Context.current().info.heartbeatDetails as Progress | undefined)?.results ?? [];
      const results = [...done];
      const beat = () => Context.current().heartbeat({ results } satisfies Progress);
      return replayRouteBatch({ client: temporal, db, taskQueue, waiting: beat }, input, done, (result) => {
        results.push(result);
        beat();
      });
    },
  };
}
