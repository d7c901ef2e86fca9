import { Command } from 'commander';
import { loadCommonConfig } from '../config';
import { openDatabase } from '../db/database';
import { startBacklog, type Backlog } from '../db/inbox';
import { listHolds, type Hold } from '../db/holds';
import { UNROUTED_WINDOW_MS, unroutedTypes, type UnroutedType } from '../db/event-bodies';
import { DEFAULT_FLOW } from '../flows';
import { describeHold } from './holds';
import { OperationRejectedError } from '../core/errors';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { jsonOption, print } from './output';

/** What `durable-webhooks status` reports. */
export interface Status {
  temporal: { address: string; namespace: string; answering: boolean };
  /** Committed bodies whose workflow Temporal has not confirmed yet (src/intake/). */
  backlog: Backlog;
  /** The active holds, and how many events each holds now. */
  holds: Hold[];
  /** Event types no route maps, received over the last 7 days: a provider's new type, noticed. */
  unrouted: UnroutedType[];
}

export function statusCommand(): Command {
  return new Command('status')
    .description(
      'Say whether Temporal answers, how many committed events wait for their workflow to start (the inbox backlog) and for how long, and how many starts are dead-lettered, and the holds; exits 1 when Temporal does not answer or a start is dead-lettered.',
    )
    .addOption(jsonOption('print the status as JSON'))
    .action(async (options: { json?: boolean }) => {
      const config = loadCommonConfig();
      if (!config.databaseUrl)
        throw new OperationRejectedError('status reads the body store: set DATABASE_URL (while npm run dev runs, the CLI finds its database by itself).');
      const settings = temporalSettings();
      const client = lazyClient(settings);
      const db = await openDatabase({ url: config.databaseUrl, exitOnIdle: true });
      try {
        const answering = await client.connection
          .withDeadline(Date.now() + 5_000, () => client.workflowService.describeNamespace({ namespace: settings.namespace }))
          .then(
            () => true,
            () => false,
          );
        const status: Status = {
          temporal: { address: settings.connectionOptions.address!, namespace: settings.namespace, answering },
          backlog: await startBacklog(db),
          holds: await listHolds(db),
          unrouted: await unroutedTypes(db, DEFAULT_FLOW.name, UNROUTED_WINDOW_MS, 20),
        };
        print(options.json, status, () => describe(status));
        if (!answering || status.backlog.deadLettered > 0) process.exitCode = 1;
      } finally {
        await client.connection.close();
        await db.close();
      }
    });
}

function describe({ temporal, backlog, holds, unrouted }: Status): string {
  return [
    `Temporal   ${temporal.address} (namespace ${temporal.namespace}): ${temporal.answering ? 'answering' : 'NOT answering'}`,
    `Backlog    ${backlog.count === 0 ? 'none: every committed event has its workflow' : `${backlog.count} event(s) committed and not started yet, the oldest waiting ${Math.round(backlog.oldestSeconds ?? 0)} s`}`,
    `Dead       ${backlog.deadLettered === 0 ? 'none' : `${backlog.deadLettered} start(s) Temporal keeps refusing (see durable-webhooks events show); fix the cause, then durable-webhooks inbox retry --all`}`,
    `Holds      ${holds.length === 0 ? 'none' : `${backlog.held} event(s) held by ${holds.length} hold(s); durable-webhooks release <source> starts them`}`,
    ...holds.map((hold) => `           ${describeHold(hold)}`),
    `Unrouted   ${unrouted.length === 0 ? 'none in the last 7 days' : 'event types no route maps (recorded and ignored), last 7 days; route them, or say ignore for them (docs/flows.md):'}`,
    ...unrouted.map((each) => `           ${each.source} ${each.type}: ${each.count}, last ${each.lastReceivedAt}`),
  ].join('\n');
}
