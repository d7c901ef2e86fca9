import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import Long from 'long';
import type { Queryable } from '../db/database';
import { SIGNALS, statusQuery, type EventProgress, type WorkflowType } from '../../contracts';
import { ledgerRecord, recordStopped, type LedgerRecord } from '../db/ledger';
import { EventNotFoundError, OperationRejectedError } from '../errors';
import { resetPoint, type ResetTarget } from './reset-points';
import { toSummary, visibilityQuery, type EventFilter, type EventSummary } from './visibility';

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
    const progress = await handle.query(statusQuery).catch(() => null);
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
    for await (const execution of this.client.workflow.list({ query: visibilityQuery(filter, this.options.now?.()) })) {
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
    const accepted = SIGNALS[type as WorkflowType] ?? [];
    const signal = accepted.find((definition) => definition.name === name);
    if (!signal) {
      const names = accepted.map((definition) => definition.name);
      throw new OperationRejectedError(`${type} does not handle the signal "${name}"; ${names.length ? `it accepts ${names.join(', ')}` : 'it accepts no signals'}.`);
    }
    await this.client.workflow.getHandle(eventId).signal(signal, ...(data === undefined ? [] : [data]));
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

  /** Terminates the event's workflow; with the database, the ledger records it as failed, since no workflow code runs to. */
  async terminate(eventId: string, reason: string): Promise<void> {
    await this.requireRunning(eventId);
    await this.client.workflow.getHandle(eventId).terminate(reason);
    if (this.options.db) await recordStopped(this.options.db, eventId, { terminated: reason });
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
    if (matches.length === 0) throw new OperationRejectedError(`No event matches ${visibilityQuery(filter, this.options.now?.())}; nothing was reset.`);
    if (dryRun) return matches.map((event) => ({ eventId: event.eventId, runId: null as string | null }));
    const done = [];
    for (const event of matches) done.push(await this.reset(event.eventId, to, reason));
    return done.map(({ eventId, runId }) => ({ eventId, runId: runId as string | null }));
  }

  uiLink(eventId: string): string {
    return `${this.options.uiUrl}/namespaces/${encodeURIComponent(this.client.options.namespace)}/workflows/${encodeURIComponent(eventId)}`;
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

function causeChain(error: unknown): string[] {
  const chain: string[] = [];
  for (let current = error as (Error & { type?: string; cause?: unknown }) | undefined; current; current = current.cause as typeof current) {
    chain.push(`${current.type ?? current.name}: ${current.message}`);
  }
  return chain;
}

