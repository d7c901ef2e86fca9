import { Command } from 'commander';
import { loadCommonConfig } from '../config';
import { openDatabase } from '../db/database';
import { retryDeadLetters, wakeSweepers } from '../db/inbox';
import { OperationRejectedError } from '../core/errors';
import { jsonOption, print } from './output';

/** `durable-webhooks inbox …`: the committed events whose workflow is not started yet. */
export function inboxCommand(): Command {
  const inbox = new Command('inbox').description(
    'The inbox: committed events whose workflow Temporal has not started yet (durable-webhooks status counts them).',
  );
  inbox
    .command('retry')
    .description('Start dead-lettered events again (those whose start Temporal kept refusing), once the cause is fixed: one by its event ID, or --all.')
    .argument('[eventId]', 'the event to start again')
    .option('--source <name>', 'with an event ID: its source, where two sources share the ID')
    .option('--all', 'every dead-lettered event')
    .addOption(jsonOption('print what was taken back as JSON'))
    .action(async (eventId: string | undefined, options: { source?: string; all?: boolean; json?: boolean }) => {
      if ((eventId === undefined) === !options.all) throw new OperationRejectedError('Name one event ID, or --all for every dead-lettered event.');
      const config = loadCommonConfig();
      if (!config.databaseUrl)
        throw new OperationRejectedError(
          'inbox retry changes the body store: set DATABASE_URL (while npm run dev runs, the CLI finds its database by itself).',
        );
      const db = await openDatabase({ url: config.databaseUrl, exitOnIdle: true });
      try {
        const retried = await retryDeadLetters(db, eventId === undefined ? undefined : { eventId, source: options.source });
        if (eventId !== undefined && retried.length === 0)
          throw new OperationRejectedError(`No dead-lettered start for the event ${eventId}${options.source ? ` of ${options.source}` : ''}.`);
        await wakeSweepers(db);
        print(options.json, { retried }, () => `${retried.length} dead-lettered event(s) due now; a sweeper (any receiver or worker) starts them.`);
      } finally {
        await db.close();
      }
    });
  return inbox;
}
