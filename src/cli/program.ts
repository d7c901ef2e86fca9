import { Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { SEARCH_ATTRIBUTES } from '../../contracts';
import { loadCommonConfig, loadReceiverConfig } from '../config';
import { openDatabase } from '../db/database';
import { migrate } from '../db/migrations';
import { temporalSettings } from '../temporal/connection';
import { MIN_RETENTION_SECONDS, prepareNamespace } from '../temporal/namespace';
import { backfillCommand } from './backfill';
import { consoleCommand } from './console';
import { entitiesCommand } from './entities';
import { eventsCommand } from './events';
import { flowsCommand } from './flows';
import { providersCommand } from './providers';
import { inboxCommand } from './inbox';
import { holdCommands } from './holds';
import { jobsCommand } from './jobs';
import { reconcileCommand } from './reconcile';
import { routesCommand } from './routes';
import { messagesCommand } from './messages';
import { send } from './send';
import { PROVIDERS } from '../providers/index';
import { statusCommand } from './status';
import { workersCommand } from './workers';
import { jsonOption, print } from './output';
import { positiveIntegerOf } from '../core/env';

/** The `durable-webhooks` command with every subcommand; src/cli/index.ts runs it. */
export function buildProgram(): Command {
  const program = new Command('durable-webhooks').description('Operate durable-webhooks: send signed sample events, inspect events by ID.');

  program
    .command('send')
    .description('Post a correctly signed sample event to a receiver, like `stripe trigger`; repeats are the same delivery.')
    .argument(
      '<source>',
      `the source to send to: ${PROVIDERS.flatMap((provider) => (provider.builtIn ? [provider.builtIn.name] : [])).join(', ')}, or one from WEBHOOKS_CONFIG`,
    )
    .argument(
      '<fixture-or-type>',
      `an event type (built-in samples: ${PROVIDERS.flatMap((provider) => (provider.builtIn ? Object.keys(provider.samples).map((type) => `${provider.builtIn!.name} ${type}`) : [])).join(', ')}) or a JSON file {"type","payload"}`,
    )
    .option('--repeat <n>', 'send the same delivery this many times', positiveInteger, 1)
    .option('--url <url>', 'the receiver base URL (default: http://localhost:$PORT, PORT defaulting to 3000)')
    .option('--id <eventId>', 'use this event ID instead of a new one')
    .option(
      '--thin',
      'Stripe: send it as a thin event notification (v1.<type>, the changed object by reference), as an event destination with thin payloads does',
    )
    .addOption(jsonOption('print each response as one JSON line'))
    .action(async (source: string, fixtureOrType: string, options: { repeat: number; url?: string; id?: string; thin?: boolean; json?: boolean }) => {
      // A client that signs samples: an unset secret means the development value `npm run dev` uses.
      const config = loadReceiverConfig(process.env, { development: true });
      const attempts = await send(
        config,
        { source, fixtureOrType, repeat: options.repeat, url: options.url ?? `http://localhost:${config.port}`, eventId: options.id, thin: options.thin },
        (attempt, index) => {
          if (options.json) {
            console.log(JSON.stringify(attempt));
            return;
          }
          const body = attempt.body as { status?: string; eventId?: string; workflowId?: string; title?: string; detail?: string };
          const outcome = body.status ? `${body.status.padEnd(9)} ${body.eventId}` : `${body.title}: ${body.detail}`;
          console.log(`${index + 1}/${options.repeat}  ${attempt.status}  ${outcome}`);
        },
      );
      if (attempts.some((attempt) => attempt.status >= 300)) process.exitCode = 1;
    });

  program
    .command('setup')
    .description(`Prepare the Temporal namespace: register ${SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')}, raise retention to at least 7 days.`)
    .addOption(jsonOption())
    .action(async (options: { json?: boolean }) => {
      const settings = temporalSettings();
      const address = settings.connectionOptions.address;
      const connection = await Connection.connect(settings.connectionOptions).catch((error: Error) => {
        throw new Error(`cannot reach Temporal at ${address} (TEMPORAL_ADDRESS): ${error.message}`);
      });
      try {
        await prepareNamespace(connection, settings.namespace);
      } finally {
        await connection.close();
      }
      const searchAttributes = SEARCH_ATTRIBUTES.map((key) => key.name);
      print(
        options.json,
        { namespace: settings.namespace, address, searchAttributes, minRetentionDays: MIN_RETENTION_SECONDS / 86400 },
        () =>
          `Namespace "${settings.namespace}" at ${address}: search attributes ${searchAttributes.join(', ')} registered, retention at least ${MIN_RETENTION_SECONDS / 86400} days.`,
      );
    });

  program
    .command('migrate')
    .description("Apply the database's pending migrations (DATABASE_URL), as receivers and workers do at start: a deploy runs it once, first.")
    .addOption(jsonOption())
    .action(async (options: { json?: boolean }) => {
      const { databaseUrl } = loadCommonConfig();
      if (!databaseUrl) throw new Error('DATABASE_URL is required: the migrations are for the database receivers and workers share.');
      const db = await openDatabase({ url: databaseUrl });
      try {
        const applied = await migrate(db);
        print(options.json, { applied }, () =>
          applied.length > 0 ? `Applied ${applied.length} migration(s): ${applied.join(', ')}.` : 'The database is up to date.',
        );
      } finally {
        await db.close();
      }
    });

  program.addCommand(eventsCommand());
  program.addCommand(entitiesCommand());
  program.addCommand(flowsCommand());
  program.addCommand(routesCommand());
  program.addCommand(providersCommand());
  program.addCommand(backfillCommand());
  program.addCommand(reconcileCommand());
  program.addCommand(messagesCommand());
  program.addCommand(statusCommand());
  program.addCommand(inboxCommand());
  for (const command of holdCommands()) program.addCommand(command);
  program.addCommand(jobsCommand());
  program.addCommand(workersCommand());
  program.addCommand(consoleCommand());
  return program;
}

function positiveInteger(value: string): number {
  const parsed = positiveIntegerOf(value);
  if (parsed === undefined) throw new InvalidArgumentError('must be a positive integer.');
  return parsed;
}
