import { Command, Option } from 'commander';
import type { BulkInput } from '../../contracts';
import { OperationRejectedError } from '../core/errors';
import { CONFIRM_OVER, type BulkJobs, type BulkJobView } from '../temporal/bulk-jobs';
import { FILTER, FILTER_FIELDS, type EventFilter } from '../temporal/visibility';
import type { Operations } from './operations';
import { operator, rateOption } from './options';
import { print } from './output';

/**
 * The bulk form of `events signal|cancel|terminate|retry|reset`: with no event ID, a filter picks
 * the events, and a job (src/temporal/bulk-jobs.ts) acts on them, watched to its end.
 */

/** A bulk command's filter and how it runs. */
export interface BulkOptions extends EventFilter {
  rate?: number;
  dryRun?: boolean;
  yes?: boolean;
  reason?: string;
}

/**
 * The filter's options (docs/operating.md#the-filter), the same for `events list` and the bulk
 * commands; `lead` starts each description (`bulk: ` where the command also takes an event ID).
 */
export function addFilterOptions(command: Command, lead = ''): Command {
  for (const { field, value, matches, choices } of FILTER) {
    const option = new Option(`--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)} <${value}>`, `${lead}${matches}`);
    command.addOption(choices ? option.choices([...choices]) : option);
  }
  return command;
}

export function addBulkOptions(command: Command): void {
  addFilterOptions(command, 'bulk: ')
    .option('--rate <n/s>', 'bulk: at most this many events a second (20/s, 600/m)', rateOption('--rate'))
    .option('--dry-run', 'bulk: only count the matches and show five')
    .option('--yes', `bulk: act on more than ${CONFIRM_OVER} matches (without, it is a dry run)`);
  if (!command.options.some((option) => option.long === '--reason'))
    command.option('--reason <reason>', "bulk: why, kept in the job and in each event's history");
}

/** The filter the options give, or undefined when they give none. */
export function givenFilter(options: EventFilter): EventFilter | undefined {
  const given = Object.fromEntries(FILTER_FIELDS.flatMap((field) => (options[field] !== undefined ? [[field, options[field]]] : [])));
  return Object.keys(given).length > 0 ? given : undefined;
}

/**
 * A bulk action from the CLI: the dry run's count and examples, or the job started and watched to
 * its end (a progress bar on a terminal), then one line per failure; exit 1 when any failed.
 */
export async function runBulk(
  { jobs }: Operations,
  action: Pick<BulkInput, 'action' | 'to' | 'reason' | 'signal'>,
  options: BulkOptions & { json?: boolean },
): Promise<void> {
  const filter = givenFilter(options);
  if (!filter)
    throw new OperationRejectedError(
      `Give an event ID, or a filter (--source, --type, --status, --since, --until, --via, --tenant, --error-class, --query, --group) for many.`,
    );
  const answer = await jobs.request({ ...action, filter, rate: options.rate, by: operator() }, { dryRun: options.dryRun, yes: options.yes });
  if (answer.dryRun && answer.count === 0) {
    print(options.json, answer, () => `Nothing to ${action.action}: ${answer.reason}.`);
    return;
  }
  if (answer.dryRun) {
    print(options.json, answer, () =>
      [
        `Would ${action.action} ${answer.count} event(s) (${answer.reason}); for example:`,
        ...answer.examples.map((event) => `  ${event.eventId}  ${event.source ?? '-'}  ${event.eventType ?? '-'}  ${event.status}`),
        options.dryRun ? '' : 'Run again with --yes to do it.',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    return;
  }
  if (!options.json) console.error(`Started ${answer.jobId} for ${answer.count} event(s). Stop it with: durable-webhooks jobs stop '${answer.jobId}'`);
  const final = await watchJob(jobs, answer.jobId, !options.json && process.stderr.isTTY);
  print(options.json, final, () => describeJob(final));
  if (final.failed > 0 || final.status !== 'completed') process.exitCode = 1;
}

/** Polls the job until it ends, drawing its progress on stderr when `bar`. */
export async function watchJob(jobs: BulkJobs, jobId: string, bar: boolean): Promise<BulkJobView> {
  for (;;) {
    const view = await jobs.show(jobId);
    if (bar) process.stderr.write(`\r${progressBar(view)}`);
    if (view.status !== 'running') {
      if (bar) process.stderr.write('\n');
      return view;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function progressBar(view: BulkJobView): string {
  const skipped = Object.values(view.skipped).reduce((sum, each) => sum + each, 0);
  const handled = view.done + skipped + view.failed;
  const width = 30;
  const filled = view.total === 0 ? 0 : Math.round((handled / view.total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${handled}/${view.total}  ${view.done} done, ${skipped} skipped, ${view.failed} failed`;
}

/** The job's end: its counts, the skipped ones by reason, and one line per failure. */
export function describeJob(view: BulkJobView): string {
  const skipped = Object.entries(view.skipped).map(([reason, count]) => `${count} skipped: ${reason}`);
  return [
    `${view.jobId}: ${view.state === 'stopped' ? 'stopped' : view.status} · ${view.total} matched · ${view.done} done${skipped.length ? ` · ${skipped.join(' · ')}` : ''} · ${view.failed} failed`,
    ...view.failures.map((failure) => `failed  ${failure.eventId}: ${failure.error}`),
    ...(view.failed > view.failures.length ? [`… and ${view.failed - view.failures.length} more failures`] : []),
  ].join('\n');
}
