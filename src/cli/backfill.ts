import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { Command, InvalidArgumentError, Option } from 'commander';
import pg from 'pg';
import { ProviderKind } from '../../contracts';
import { backfill, summaryLine, type BackfillDeps, type ListedEvent } from '../backfill/backfill';
import { createGitHubClient, gitHubDeliveries, parseHookPaths } from '../backfill/github';
import { STRIPE_EVENT_RETENTION_DAYS, stripeEvents } from '../backfill/stripe';
import { loadCommonConfig } from '../config';
import { createAdapter, type Source } from '../providers/registry';
import { createStripeClient } from '../services';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { TemporalEventStarter } from '../temporal/start-event';

interface BackfillOptions {
  since: Date;
  until?: Date;
  dryRun?: boolean;
  json?: boolean;
}

/** `durable-webhooks backfill …`: start the events a provider has that never arrived by webhook. */
export function backfillCommand(): Command {
  const command = new Command('backfill').description("Start, from the provider's own API, the events the receiver never got; what Temporal or the ledger has is reported, not started.");
  const since = () => new Option('--since <when>', 'how far back: a duration (30m, 72h, 7d) or an ISO time').argParser((value) => pointInTime(value, '--since')).makeOptionMandatory();
  const dryRun = () => new Option('--dry-run', 'list what would start, start nothing');
  const json = () => new Option('--json', 'print one JSON line per event, then the counts');

  command
    .command('stripe')
    .description(`Stripe's Events API (STRIPE_SECRET_KEY, STRIPE_API_URL); Stripe keeps events ${STRIPE_EVENT_RETENTION_DAYS} days.`)
    .addOption(since())
    .option('--until <when>', 'up to: a duration ago or an ISO time (default now)', (value) => pointInTime(value, '--until'))
    .option('--types <types>', 'only these event types, comma-separated', (value) => value.split(',').map((type) => type.trim()).filter(Boolean))
    .addOption(dryRun())
    .addOption(json())
    .action(async (options: BackfillOptions & { types?: string[] }) => {
      if (Date.now() - options.since.getTime() > STRIPE_EVENT_RETENTION_DAYS * 86_400_000) {
        throw new InvalidArgumentError(`--since reaches further back than the ${STRIPE_EVENT_RETENTION_DAYS} days Stripe keeps events.`);
      }
      const secretKey = process.env.STRIPE_SECRET_KEY;
      if (!secretKey) throw new InvalidArgumentError('backfill stripe needs STRIPE_SECRET_KEY (a restricted key that may read events is enough).');
      const stripe = createStripeClient(secretKey, process.env.STRIPE_API_URL || undefined);
      await run(builtInSource('stripe', ProviderKind.STRIPE), stripeEvents(stripe, options, 'stripe'), options, options.dryRun ? 'dry-run' : 'start');
    });

  command
    .command('github')
    .description("Each hook's deliveries (GITHUB_HOOKS, GITHUB_TOKEN, GITHUB_API_URL): every delivery GUID not recorded is fetched and started, or with --redeliver redelivered by GitHub.")
    .addOption(since())
    .option('--redeliver', 'ask GitHub to redeliver each missing delivery (signed, to the hook URL) instead of starting it here')
    .addOption(dryRun())
    .addOption(json())
    .action(async (options: BackfillOptions & { redeliver?: boolean }) => {
      const hooks = parseHookPaths(process.env.GITHUB_HOOKS);
      const token = process.env.GITHUB_TOKEN;
      if (!token) throw new InvalidArgumentError('backfill github needs GITHUB_TOKEN (a token that may read the hooks: admin:repo_hook or admin:org_hook).');
      const octokit = createGitHubClient(token, process.env.GITHUB_API_URL || undefined);
      await run(builtInSource('github', ProviderKind.GITHUB), gitHubDeliveries(octokit, hooks, options.since), options, options.dryRun ? 'dry-run' : options.redeliver ? 'redeliver' : 'start');
    });

  return command;
}

async function run(source: Source, events: AsyncIterable<ListedEvent>, options: BackfillOptions, mode: BackfillDeps['mode']): Promise<void> {
  const config = loadCommonConfig();
  const client = lazyClient(temporalSettings());
  const db = config.databaseUrl ? new pg.Pool({ connectionString: config.databaseUrl, max: 1, allowExitOnIdle: true }) : undefined;
  try {
    const counts = await backfill(
      events,
      { source, starter: new TemporalEventStarter(client, { taskQueue: config.taskQueue }), exists: (workflowId) => exists(client, workflowId), db, mode },
      (line) => console.log(options.json ? JSON.stringify(line) : `${line.outcome.padEnd(20)} ${line.eventId}  ${line.type}`),
    );
    console.log(options.json ? JSON.stringify({ counts }) : summaryLine(counts, mode));
    if (counts.failed > 0) process.exitCode = 1;
  } finally {
    await db?.end();
    await client.connection.close();
  }
}

/** The built-in source of a provider: its name, no workflow-ID prefix, and its adapter's checks. */
function builtInSource(name: string, kind: ProviderKind): Source {
  return { name, workflowIdPrefix: '', adapter: createAdapter({ name, kind, secrets: [], publicKeys: [], workflowIdPrefix: '' }) };
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** `72h`, `30m`, `7d` back from now, or an ISO 8601 time. */
function pointInTime(value: string, flag: string): Date {
  const ago = /^\d+\s*[a-z]+$/i.test(value) ? durationMs(value) : undefined;
  if (ago !== undefined) return new Date(Date.now() - ago);
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new InvalidArgumentError(`${flag} must be a duration (30m, 72h, 7d) or an ISO 8601 time, not "${value}".`);
  return time;
}

function durationMs(value: string): number | undefined {
  try {
    return msToNumber(value as Duration);
  } catch {
    return undefined;
  }
}
