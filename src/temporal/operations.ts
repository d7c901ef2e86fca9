import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import type { Queryable } from '../db/database';
import { ledgerRecord, type LedgerRecord } from '../db/ledger';
import { EventNotFoundError, OperationRejectedError } from '../errors';
import type { EventProgress } from '../../workflows/steps';
import { WEBHOOK_EVENT_TYPE, WEBHOOK_SOURCE } from './search-attributes';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Signals each workflow type handles; anything else is refused before it reaches Temporal. */
export const SIGNALS: Readonly<Record<string, readonly string[]>> = {
  chargeOrder: ['approve', 'reject'],
  subscriptionEntity: ['apply'],
};

/** Where `reset --to` can point: the `temporal` CLI's reset types, the last failure, or a history event ID. */
export type ResetTarget = 'first' | 'last-task' | 'last-failure' | number;

export function parseResetTarget(value: unknown): ResetTarget {
  if (value === 'first' || value === 'last-task' || value === 'last-failure') return value;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) return Number(value);
  throw new OperationRejectedError(`--to must be first, last-task, last-failure or a history event ID, not "${String(value)}".`);
}

export const EVENT_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'terminated', 'timed_out', 'continued_as_new'] as const;
export type EventStatusName = (typeof EVENT_STATUSES)[number];

export interface EventSummary {
  eventId: string;
  runId: string;
  workflowType: string;
  status: EventStatusName;
  source: string | null;
  eventType: string | null;
  startTime: string;
  closeTime: string | null;
}

export interface EventView extends EventSummary {
  summary: string | null;
  /** The `status` query's answer; null when no worker answered it. */
  progress: EventProgress | null;
  /** The event's claim and recorded steps in the ledger; null without database access or before the claim. */
  ledger: LedgerRecord | null;
  result: unknown;
  /** The failure and its causes, outermost first, as `Type: message`. */
  failure: string[] | null;
  uiUrl: string;
}

export interface EventFilter {
  source?: string;
  type?: string;
  status?: EventStatusName;
  /** A duration back from now (`2h`, `3d`) or an ISO 8601 time. */
  since?: string;
  /** A raw visibility query, ANDed with the other filters. */
  query?: string;
}

/**
 * Operations on event workflows, addressed by event ID (the workflow ID), shared by the
 * `durable-webhooks events` CLI and the `/admin` API.
 */
export class EventOperations {
  constructor(
    private readonly client: Client,
    private readonly options: { uiUrl: string; now?: () => Date; db?: Queryable },
  ) {}

  async show(eventId: string): Promise<EventView> {
    const handle = this.client.workflow.getHandle(eventId);
    const description = await this.describe(eventId);
    const summary = toSummary(description);
    const progress = await handle.query<EventProgress>('status').catch(() => null);
    let result: unknown = null;
    let failure: string[] | null = null;
    if (summary.status === 'completed') {
      result = await handle.result();
    } else if (summary.status !== 'running') {
      failure = await handle.result().then(
        () => null,
        (error: unknown) => causeChain(error instanceof WorkflowFailedError ? error.cause : error),
      );
    }
    const ledger = this.options.db ? await ledgerRecord(this.options.db, eventId) : null;
    return { ...summary, summary: (await description.staticSummary()) ?? null, progress, ledger, result, failure, uiUrl: this.uiLink(eventId) };
  }

  /**
   * Events whose current run matches the filter. Visibility holds every run, so an event that
   * failed and was reset would otherwise still match `--status failed` through its old run.
   */
  async list(filter: EventFilter, limit = 100): Promise<EventSummary[]> {
    const events: EventSummary[] = [];
    const seen = new Set<string>();
    for await (const execution of this.client.workflow.list({ query: this.visibilityQuery(filter) })) {
      if (seen.has(execution.workflowId)) continue;
      seen.add(execution.workflowId);
      if ((await this.describe(execution.workflowId)).runId !== execution.runId) continue;
      events.push(toSummary(execution));
      if (events.length >= limit) break;
    }
    return events;
  }

  async signal(eventId: string, name: string, data?: unknown): Promise<void> {
    const { type } = await this.describe(eventId);
    const accepted = SIGNALS[type] ?? [];
    if (!accepted.includes(name)) {
      throw new OperationRejectedError(
        `${type} does not handle the signal "${name}"; ${accepted.length ? `it accepts ${accepted.join(', ')}` : 'it accepts no signals'}.`,
      );
    }
    await this.client.workflow.getHandle(eventId).signal(name, ...(data === undefined ? [] : [data]));
  }

  async query(eventId: string, name: string): Promise<unknown> {
    await this.describe(eventId);
    try {
      return await this.client.workflow.getHandle(eventId).query(name);
    } catch (error) {
      throw new OperationRejectedError(`The query "${name}" failed: ${(error as Error).message}`);
    }
  }

  async cancel(eventId: string): Promise<void> {
    await this.requireRunning(eventId);
    await this.client.workflow.getHandle(eventId).cancel();
  }

  async terminate(eventId: string, reason: string): Promise<void> {
    await this.requireRunning(eventId);
    await this.client.workflow.getHandle(eventId).terminate(reason);
  }

  /**
   * Resets the event's latest run to a workflow task, as `temporal workflow reset` does: the new
   * run keeps the run chain, so its ledger claim holds and finished steps are not repeated.
   * The TypeScript client has no reset method, so this calls the service directly.
   */
  async reset(eventId: string, to: ResetTarget, reason: string): Promise<{ eventId: string; runId: string; resetToEventId: number }> {
    const { runId } = await this.describe(eventId);
    const { events } = await this.client.workflow.getHandle(eventId, runId).fetchHistory();
    const resetToEventId = resetPoint(events ?? [], to);
    const response = await this.client.workflowService.resetWorkflowExecution({
      namespace: this.client.options.namespace,
      workflowExecution: { workflowId: eventId, runId },
      reason,
      workflowTaskFinishEventId: Long.fromNumber(resetToEventId),
      requestId: randomUUID(),
    });
    return { eventId, runId: response.runId!, resetToEventId };
  }

  /** The batch form: every event the query matches, or (with `dryRun`) only the list of them. */
  async resetMatching(filter: EventFilter, to: ResetTarget, reason: string, { dryRun }: { dryRun: boolean }) {
    const matches = await this.list(filter, 1000);
    if (matches.length === 0) throw new OperationRejectedError(`No event matches ${this.visibilityQuery(filter)}; nothing was reset.`);
    if (dryRun) return matches.map((event) => ({ eventId: event.eventId, runId: null as string | null }));
    const done = [];
    for (const event of matches) done.push(await this.reset(event.eventId, to, reason));
    return done.map(({ eventId, runId }) => ({ eventId, runId: runId as string | null }));
  }

  uiLink(eventId: string): string {
    return `${this.options.uiUrl}/namespaces/${encodeURIComponent(this.client.options.namespace)}/workflows/${encodeURIComponent(eventId)}`;
  }

  /** Event workflows only (they carry WebhookSource), with the filters ANDed. */
  visibilityQuery(filter: EventFilter): string {
    const clauses = ['WebhookSource IS NOT NULL'];
    if (filter.source) clauses.push(`WebhookSource = '${literal(filter.source, 'source')}'`);
    if (filter.type) clauses.push(`WebhookEventType = '${literal(filter.type, 'type')}'`);
    if (filter.status) {
      if (!EVENT_STATUSES.includes(filter.status)) throw new OperationRejectedError(`--status must be one of ${EVENT_STATUSES.join(', ')}.`);
      clauses.push(`ExecutionStatus = '${STATUS_NAMES[filter.status]}'`);
    }
    if (filter.since) clauses.push(`StartTime >= '${this.sinceTime(filter.since)}'`);
    if (filter.query) clauses.push(`(${filter.query})`);
    return clauses.join(' AND ');
  }

  private sinceTime(since: string): string {
    const relative = /^(\d+)(m|h|d)$/.exec(since);
    if (relative) {
      const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd'];
      return new Date((this.options.now?.() ?? new Date()).getTime() - Number(relative[1]) * unitMs).toISOString();
    }
    const time = new Date(since);
    if (Number.isNaN(time.getTime())) throw new OperationRejectedError(`--since must be a duration (30m, 2h, 3d) or an ISO 8601 time, not "${since}".`);
    return time.toISOString();
  }

  private async describe(eventId: string): Promise<WorkflowExecutionDescription> {
    try {
      return await this.client.workflow.getHandle(eventId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new EventNotFoundError(eventId);
      throw error;
    }
  }

  private async requireRunning(eventId: string): Promise<void> {
    const description = await this.describe(eventId);
    if (description.status.name !== 'RUNNING') {
      throw new OperationRejectedError(`Event ${eventId} is ${description.status.name.toLowerCase()}, not running.`);
    }
  }
}

const STATUS_NAMES: Record<EventStatusName, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  continued_as_new: 'ContinuedAsNew',
};

function literal(value: string, what: string): string {
  if (!/^[\w.:@-]+$/.test(value)) throw new OperationRejectedError(`--${what} may hold letters, digits and . _ : @ - only.`);
  return value;
}

type Execution = Pick<WorkflowExecutionDescription, 'workflowId' | 'runId' | 'type' | 'status' | 'startTime' | 'closeTime' | 'typedSearchAttributes'>;

function toSummary(execution: Execution): EventSummary {
  const status = execution.status.name.toLowerCase();
  return {
    eventId: execution.workflowId,
    runId: execution.runId,
    workflowType: execution.type,
    status: (status === 'canceled' ? 'cancelled' : status) as EventStatusName,
    source: execution.typedSearchAttributes.get(WEBHOOK_SOURCE) ?? null,
    eventType: execution.typedSearchAttributes.get(WEBHOOK_EVENT_TYPE) ?? null,
    startTime: execution.startTime.toISOString(),
    closeTime: execution.closeTime?.toISOString() ?? null,
  };
}

function causeChain(error: unknown): string[] {
  const chain: string[] = [];
  for (let current = error as (Error & { type?: string; cause?: unknown }) | undefined; current; current = current.cause as typeof current) {
    chain.push(`${current.type ?? current.name}: ${current.message}`);
  }
  return chain;
}

const RESETTABLE = new Set<number>([EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]);
/** Failures of a step: where a failed workflow's trouble started. */
const STEP_FAILURES = new Set<number>([
  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
]);
const RUN_FAILURES = new Set<number>([EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT]);

/**
 * The WorkflowTaskCompleted event to reset to. `first` and `last-task` are the `temporal` CLI's
 * FirstWorkflowTask and LastWorkflowTask; `last-failure` is the last workflow task completed before
 * the last failed step (for an activity, before it was scheduled), so that step runs again; with no
 * failed step, before the run's own failure.
 */
export function resetPoint(events: readonly HistoryEvent[], to: ResetTarget): number {
  const id = (event: HistoryEvent) => Number(event.eventId);
  const completed = events.filter((event) => RESETTABLE.has(event.eventType ?? -1));
  if (completed.length === 0) throw new OperationRejectedError('This run has no completed workflow task to reset to.');
  if (to === 'first') return id(completed[0]!);
  if (to === 'last-task') return id(completed.at(-1)!);
  if (to === 'last-failure') {
    const lastOf = (types: Set<number>) => events.filter((event) => types.has(event.eventType ?? -1)).at(-1);
    const failure = lastOf(STEP_FAILURES) ?? lastOf(RUN_FAILURES);
    if (!failure) throw new OperationRejectedError('This run has no failure to reset before; use --to first or last-task.');
    const scheduled = failure.activityTaskFailedEventAttributes?.scheduledEventId ?? failure.activityTaskTimedOutEventAttributes?.scheduledEventId;
    const boundary = scheduled ? Number(scheduled) : id(failure);
    const before = completed.filter((event) => id(event) < boundary).at(-1);
    if (!before) throw new OperationRejectedError('No workflow task completed before the failure; use --to first.');
    return id(before);
  }
  if (!completed.some((event) => id(event) === to)) {
    const valid = completed.map(id).join(', ');
    throw new OperationRejectedError(`History event ${to} is not a completed workflow task of this run; reset to one of: ${valid}.`);
  }
  return to;
}
