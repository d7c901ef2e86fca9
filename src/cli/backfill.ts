import { WorkflowNotFoundError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { ProviderKind } from '../../contracts';
import { backfill, summaryLine, type BackfillLine } from '../backfill/backfill';
import { STRIPE_EVENT_RETENTION_DAYS, stripeEvents } from '../backfill/stripe';
import { loadCommonConfig } from '../config';
import { createAdapter } from '../providers/registry';
import { createStripeClient } from '../services';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { TemporalEventStarter } from '../temporal/start-event';

/** `durable-webhooks backfill …`: start the events a provider has that never arrived by webhook. */
export function backfillCommand(): Command {
  const command = new Command('backfill').description("Start, from the provider's own API, the events the receiver never got; what Temporal or the ledger has is reported, not started.");

  command
    .command('stripe')
    .description(`Stripe's Events API (STRIPE_SECRET_KEY, STRIPE_API_URL); Stripe keeps events ${STRIPE_EVENT_RETENTION_DAYS} days.`)
    .requiredOption('--since <when>', 'how far back: a duration (30m, 72h, 7d) or an ISO time', (value) => pointInTime(value, '--since'))
    .option('--until <when>', 'up to: a duration ago or an ISO time (default now)', (value) => pointInTime(value, '--until'))
    .option('--types <types>', 'only these event types, comma-separated', (value) => value.split(',').map((type) => type.trim()).filter(Boolean))
    .option('--dry-run', 'list what would start, start nothing')
    .option('--json', 'print one JSON line per event, then the counts')
    .action(async (options: { since: Date; until?: Date; types?: string[]; dryRun?: boolean; json?: boolean }) => {
      if (Date.now() - options.since.getTime() > STRIPE_EVENT_RETENTION_DAYS * 86_400_000) {
        throw new InvalidArgumentError(`--since reaches further back than the ${STRIPE_EVENT_RETENTION_DAYS} days Stripe keeps events.`);
      }
      const secretKey = process.env.STRIPE_SECRET_KEY;
      if (!secretKey) throw new InvalidArgumentError('backfill stripe needs STRIPE_SECRET_KEY (a restricted key that may read events is enough).');
      const config = loadCommonConfig();
      const source = { name: 'stripe', workflowIdPrefix: '', adapter: createAdapter({ name: 'stripe', kind: ProviderKind.STRIPE, secrets: [], publicKeys: [], workflowIdPrefix: '' }) };
      const client = lazyClient(temporalSettings());
      const db = config.databaseUrl ? new pg.Pool({ connectionString: config.databaseUrl, max: 1, allowExitOnIdle: true }) : undefined;
      try {
        const events = stripeEvents(createStripeClient(secretKey, process.env.STRIPE_API_URL || undefined), options, source.name);
        const counts = await backfill(
          events,
          {
            source,
            starter: new TemporalEventStarter(client, { taskQueue: config.taskQueue }),
            db,
            dryRun: options.dryRun ? { exists: (workflowId) => exists(client, workflowId) } : undefined,
          },
          (line) => console.log(options.json ? JSON.stringify(line) : lineText(line)),
        );
        console.log(options.json ? JSON.stringify({ counts }) : summaryLine(counts, options.dryRun));
        if (counts.failed > 0) process.exitCode = 1;
      } finally {
        await db?.end();
        await client.connection.close();
      }
    });

  return command;
}

function lineText({ eventId, type, outcome }: BackfillLine): string {
  return `${outcome.padEnd(16)} ${eventId}  ${type}`;
}

async function exists(client: ReturnType<typeof lazyClient>, workflowId: string): Promise<boolean> {
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
  if (/^\d+\s*[a-z]+$/i.test(value)) {
    try {
      return new Date(Date.now() - msToNumber(value as Duration));
    } catch {
      // fall through to the error below
    }
  }
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new InvalidArgumentError(`${flag} must be a duration (30m, 72h, 7d) or an ISO 8601 time, not "${value}".`);
  return time;
}
