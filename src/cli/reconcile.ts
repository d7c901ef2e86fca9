import { Argument, Command } from 'commander';
import type { ReconcileProvider } from '../../contracts';
import { summaryLine } from '../backfill/backfill';
import { loadCommonConfig } from '../config';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { RECONCILE_PROVIDERS, ReconcileSchedules, type ReconcileStatus } from '../temporal/schedules';
import { durationMs } from './options';
import { jsonOption, print } from './output';
import { millisecondsOf } from '../core/duration';

/** `durable-webhooks reconcile …`: backfill on a Temporal Schedule, run by the worker. */
export function reconcileCommand(): Command {
  const command = new Command('reconcile').description(
    "Backfill on a schedule: a Temporal Schedule (reconcile-stripe, reconcile-github, reconcile-paddle, reconcile-square) whose runs list the provider's API and start what never arrived.",
  );
  const provider = () => new Argument('<provider>', RECONCILE_PROVIDERS.join(', ')).choices([...RECONCILE_PROVIDERS]);
  const json = () => jsonOption();
  const schedules = () => {
    const config = loadCommonConfig();
    return { schedules: new ReconcileSchedules(lazyClient(temporalSettings()), { taskQueue: config.taskQueue }), config };
  };

  command
    .command('enable')
    .addArgument(provider())
    .description('Create or update the schedule. The worker runs it with its own settings (STRIPE_SECRET_KEY, or GITHUB_TOKEN and GITHUB_HOOKS).')
    .option('--every <duration>', 'how often a run starts', durationMs('--every'), millisecondsOf('15m'))
    .option('--lookback <duration>', 'how far back each run looks', durationMs('--lookback'), millisecondsOf('72h'))
    .addOption(json())
    .action(async (name: ReconcileProvider, options: { every: number; lookback: number; json?: boolean }) => {
      const status = await schedules().schedules.enable(name, options.every, options.lookback);
      print(options.json, status, () => statusText(status));
    });

  command
    .command('disable')
    .addArgument(provider())
    .description('Delete the schedule; runs already going finish.')
    .addOption(json())
    .action(async (name: ReconcileProvider, options: { json?: boolean }) => {
      await schedules().schedules.disable(name);
      print(options.json, { provider: name, enabled: false }, () => `Reconciliation from ${name} disabled.`);
    });

  command
    .command('status')
    .description('Each schedule: its interval and lookback, its next run, and its last runs with their counts.')
    .addOption(json())
    .action(async (options: { json?: boolean }) => {
      const { schedules: all } = schedules();
      const statuses = await Promise.all(RECONCILE_PROVIDERS.map((name) => all.status(name)));
      print(options.json, statuses, () => statuses.map(statusText).join('\n\n'));
    });

  return command;
}

function statusText(status: ReconcileStatus): string {
  if (!status.enabled && status.everyMs === null) return `${status.provider}: off (durable-webhooks reconcile enable ${status.provider})`;
  const lines = [
    `${status.provider}: every ${status.everyMs! / 1000} s, looking back ${status.lookbackMs! / 3_600_000} h; next run ${status.nextRun ?? '—'} (schedule ${status.scheduleId})`,
  ];
  for (const run of status.runs) {
    lines.push(`  ${run.startedAt}  ${run.status.padEnd(10)} ${run.counts ? summaryLine(run.counts) : ''}`);
  }
  return lines.join('\n');
}
