import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  BULK_ACTIONS,
  bulkJobWorkflowId,
  bulkProgressQuery,
  isBulkJobId,
  MAX_BULK_EVENTS,
  type BulkConfirmation,
  type BulkInput,
  type BulkProgress,
} from '../../contracts';
import { OperationRejectedError, ResourceNotFoundError } from '../core/errors';
import { bulkActionFlow } from '../flows';
import type { EventOperations } from './operations';
import { pointInTime } from '../core/duration';
import { parseResetTarget } from './reset-points';
import { FILTER_FIELDS, visibilityQuery, type EventFilter, type EventSummary } from './visibility';

/**
 * A dry run's `confirm` sent back (a JSON body's numbers, or a form's text): the job then acts on at
 * most `count` events, received until `until`.
 * @throws OperationRejectedError for anything else.
 */
export function readConfirmation(count: unknown, until: unknown): BulkConfirmation {
  const number = typeof count === 'string' && /^\d+$/.test(count) ? Number(count) : count;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0 || typeof until !== 'string' || Number.isNaN(Date.parse(until))) {
    throw new OperationRejectedError('The confirmation is the dry run\'s count and time ("confirm": {"count", "until"}), as it answered them; count again.');
  }
  return { count: number, until };
}

/** Over this many matches, a bulk action is a dry run unless confirmed (`--yes`, `"yes": true`). */
export const CONFIRM_OVER = 100;

/** What a bulk request answers: the dry run's count and examples (none matched: count 0), or the job it started. */
export type BulkAnswer =
  | { dryRun: true; count: number; examples: EventSummary[]; reason: string; confirm: BulkConfirmation }
  | { dryRun: false; count: number; jobId: string; runId: string };

/** A bulk job as `jobs show` reports it: its progress, and how its workflow stands. */
export interface BulkJobView extends BulkProgress {
  jobId: string;
  /** The job workflow's status: running, completed, failed, terminated… */
  status: string;
}

/**
 * Bulk actions as durable jobs: a workflow of ours (`bulkAction`) per request, which lists the
 * matching events once and acts on each at the request's rate. Temporal's batch operations act on a
 * visibility query too, but cannot skip a completed event on a retry (exactly once), reset to the
 * last failure, check a signal's argument, or report per event; the workflow does all four.
 */
/**
 * The one check of a bulk request, whichever surface asks (the CLI's bulk form, `/admin/bulk`, the
 * console's failure group): a known action, a filter of known fields that names something, a reason
 * (kept in the job and each event's history), a reset point that is one, a signal's name, a rate.
 */
function checkBulkInput(input: Omit<BulkInput, 'filter' | 'limit'> & { filter: EventFilter }): void {
  if (!(BULK_ACTIONS as readonly unknown[]).includes(input.action)) throw new OperationRejectedError(`"action" must be one of ${BULK_ACTIONS.join(', ')}.`);
  const given = Object.entries(input.filter).filter(([, value]) => value !== undefined);
  const unknown = given.map(([field]) => field).filter((field) => !(FILTER_FIELDS as readonly string[]).includes(field));
  if (given.length === 0 || unknown.length > 0 || given.some(([, value]) => typeof value !== 'string'))
    throw new OperationRejectedError(
      `"filter" must name what to act on, with text values of ${FILTER_FIELDS.join(', ')}${unknown.length ? `, not ${unknown.join(', ')}` : ''}.`,
    );
  if (typeof input.reason !== 'string' || input.reason.trim() === '')
    throw new OperationRejectedError('Give a "reason"; it is kept in the job and in each event\'s history.');
  if (input.action === 'reset') parseResetTarget(input.to ?? 'last-failure');
  if (input.action === 'signal' && typeof input.signal?.name !== 'string')
    throw new OperationRejectedError('A bulk signal needs "signal": {"name": …, "data": …}.');
  if (input.rate !== undefined && !(input.rate > 0)) throw new OperationRejectedError('"rate" must be a positive number of events per second.');
}

export class BulkJobs {
  constructor(
    private readonly client: Client,
    private readonly operations: EventOperations,
    private readonly options: { taskQueue: string; now?: () => Date },
  ) {}

  /**
   * Counts the matches and, unless it is a dry run (asked for, or over CONFIRM_OVER unconfirmed),
   * starts the job. Relative times are fixed now, and so is the end of the window when the filter
   * has none, so the job acts on what was counted and no more: a dry run answers what to confirm
   * (`confirm`), and a request with that confirmation acts on at most its count, received until its
   * time, whatever matches since.
   */
  async request(
    input: Omit<BulkInput, 'filter' | 'limit'> & { filter: EventFilter },
    { dryRun = false, yes = false, confirmed }: { dryRun?: boolean; yes?: boolean; confirmed?: BulkConfirmation } = {},
  ): Promise<BulkAnswer> {
    const now = this.options.now?.() ?? new Date();
    const until = [input.filter.until && pointInTime(input.filter.until, 'until', now), confirmed && pointInTime(confirmed.until, 'confirmed until', now), now]
      .filter((point): point is Date => point instanceof Date)
      .reduce((earliest, point) => (point < earliest ? point : earliest));
    const filter: EventFilter = {
      ...input.filter,
      ...(input.filter.since && { since: pointInTime(input.filter.since, 'since', now).toISOString() }),
      until: until.toISOString(),
    };
    if (confirmed !== undefined && !(Number.isSafeInteger(confirmed.count) && confirmed.count >= 0))
      throw new OperationRejectedError('The confirmed count must be a whole number of events.');
    checkBulkInput(input);
    const listed = await this.operations.list(filter, MAX_BULK_EVENTS + 1);
    const matches = confirmed === undefined ? listed : listed.slice(0, confirmed.count);
    if (listed.length > MAX_BULK_EVENTS && confirmed === undefined)
      throw new OperationRejectedError(`More than ${MAX_BULK_EVENTS} events match; narrow the filter (--since, --until, --type) and run one job per part.`);
    // Nothing to act on is an answer, not an error: a runbook's retry after a quiet hour finds nothing.
    if (dryRun || matches.length === 0 || (matches.length > CONFIRM_OVER && !yes && confirmed === undefined)) {
      const reason =
        matches.length === 0
          ? `no event matches ${visibilityQuery(filter, now)}; nothing to do`
          : dryRun
            ? 'a dry run, as asked'
            : `over ${CONFIRM_OVER} events match: confirm with --yes ("yes": true)`;
      return { dryRun: true, count: matches.length, examples: matches.slice(0, 5), reason, confirm: { count: matches.length, until: filter.until! } };
    }
    const jobId = bulkJobWorkflowId(input.action, randomUUID());
    const handle = await this.client.workflow.start(bulkActionFlow.workflow, {
      workflowId: jobId,
      taskQueue: this.options.taskQueue,
      args: [{ ...input, filter: { ...filter, status: filter.status }, limit: matches.length }],
      staticSummary: `bulk ${input.action} of ${matches.length} event(s) matching ${visibilityQuery(filter, now)}, by ${input.by}: ${input.reason}`.slice(
        0,
        200,
      ),
    });
    return { dryRun: false, count: matches.length, jobId, runId: handle.firstExecutionRunId };
  }

  /** The job's progress: from its query while it runs, its result once it ended. */
  async show(jobId: string): Promise<BulkJobView> {
    const handle = this.handle(jobId);
    let status: string;
    try {
      status = (await handle.describe()).status.name.toLowerCase();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ResourceNotFoundError('job', jobId);
      throw error;
    }
    const progress = status === 'completed' ? await handle.result() : await handle.query(bulkProgressQuery);
    return { jobId, status, ...progress };
  }

  /** Asks the job to stop: it finishes the batch under way and ends `stopped`. */
  async stop(jobId: string): Promise<void> {
    await this.show(jobId);
    await this.handle(jobId).cancel();
  }

  /** Recent jobs, newest first. */
  async list(limit = 20): Promise<Array<{ jobId: string; status: string; startTime: string }>> {
    const jobs = [];
    for await (const execution of this.client.workflow.list({ query: `WorkflowType = '${bulkActionFlow.name}'` })) {
      jobs.push({ jobId: execution.workflowId, status: execution.status.name.toLowerCase(), startTime: execution.startTime.toISOString() });
      if (jobs.length >= limit) break;
    }
    return jobs;
  }

  private handle(jobId: string) {
    if (!isBulkJobId(jobId)) throw new OperationRejectedError(`"${jobId}" is not a bulk job ID (they start with durable-webhooks:bulk:).`);
    return this.client.workflow.getHandle<typeof bulkActionFlow.workflow>(jobId);
  }
}
