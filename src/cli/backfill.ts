import { Command, Option } from 'commander';
import pg from 'pg';
import { summaryLine } from '../backfill/backfill';
import { runBackfill, type BackfillRequest } from '../backfill/run';
import { pointInTime } from '../core/duration';
import { SQUARE_EVENT_RETENTION_DAYS } from '../backfill/square';
import { STRIPE_EVENT_RETENTION_DAYS } from '../backfill/stripe';
import { loadCommonConfig, loadReceiverConfig } from '../config';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { jsonOption } from './output';

interface BackfillOptions {
  source?: string;
  since: string;
  until?: string;
  types?: string[];
  dryRun?: boolean;
  redeliver?: boolean;
  json?: boolean;
}

/** `durable-webhooks backfill …`: start the events a provider has that never arrived by webhook. */
export function backfillCommand(): Command {
  const command = new Command('backfill').description(
    "Start, from the provider's own API, the events the receiver never got; what Temporal or the ledger has is reported, not started.",
  );
  const since = () => new Option('--since <when>', 'how far back: a duration (30m, 72h, 7d) or an ISO time').makeOptionMandatory();
  const dryRun = () => new Option('--dry-run', 'list what would start, start nothing');
  const json = () => jsonOption('print one JSON line per event, then the counts');

  // The providers whose events API lists a time window: the same options, Stripe's with --source.
  const eventsApi = (provider: 'stripe' | 'paddle' | 'square', description: string) =>
    command
      .command(provider)
      .description(description)
      .addOption(since())
      .option('--until <when>', 'up to: a duration ago or an ISO time (default now)')
      .option('--types <types>', 'only these event types, comma-separated', (value) =>
        value
          .split(',')
          .map((type) => type.trim())
          .filter(Boolean),
      )
      .addOption(dryRun())
      .addOption(json())
      .action((options: BackfillOptions) => run(provider, options));

  eventsApi('stripe', `Stripe's Events API (STRIPE_SECRET_KEY, STRIPE_API_URL); Stripe keeps events ${STRIPE_EVENT_RETENTION_DAYS} days.`).option(
    '--source <name>',
    'a Stripe source from WEBHOOKS_CONFIG: its workflow-ID prefix and its API key (apiKeyEnv)',
  );
  eventsApi('paddle', "Paddle's events API (PADDLE_API_KEY, PADDLE_API_URL), newest first down to --since.");
  eventsApi(
    'square',
    `Square's Events API (SQUARE_ACCESS_TOKEN, SQUARE_API_URL); it searches ${SQUARE_EVENT_RETENTION_DAYS} days, and only while events are enabled for the account.`,
  );

  command
    .command('github')
    .description(
      "Each hook's deliveries (GITHUB_HOOKS, GITHUB_TOKEN, GITHUB_API_URL): every delivery GUID not recorded is fetched and started, or with --redeliver redelivered by GitHub.",
    )
    .addOption(since())
    .option('--redeliver', 'ask GitHub to redeliver each missing delivery (signed, to the hook URL) instead of starting it here')
    .addOption(dryRun())
    .addOption(json())
    .action((options: BackfillOptions) => run('github', options));

  return command;
}

async function run(provider: BackfillRequest['provider'], options: BackfillOptions): Promise<void> {
  const request: BackfillRequest = {
    provider,
    source: options.source,
    since: pointInTime(options.since, 'since'),
    until: options.until === undefined ? undefined : pointInTime(options.until, 'until'),
    types: options.types,
    mode: options.dryRun ? 'dry-run' : options.redeliver ? 'redeliver' : 'start',
  };
  const config = loadCommonConfig();
  const client = lazyClient(temporalSettings());
  const db = config.databaseUrl ? new pg.Pool({ connectionString: config.databaseUrl, max: 1, allowExitOnIdle: true }) : undefined;
  try {
    // A source other than the built-in one comes from WEBHOOKS_CONFIG, read as the receiver reads it.
    const sources = options.source && options.source !== provider ? loadReceiverConfig().sources : [];
    const counts = await runBackfill(request, { config, client, db, sources }, (line) =>
      console.log(options.json ? JSON.stringify(line) : `${line.outcome.padEnd(20)} ${line.eventId}  ${line.type}`),
    );
    console.log(options.json ? JSON.stringify({ counts }) : summaryLine(counts, request.mode));
    if (counts.failed > 0) process.exitCode = 1;
  } finally {
    await db?.end();
    await client.connection.close();
  }
}
