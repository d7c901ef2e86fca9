import { randomUUID } from 'node:crypto';
import { isGrpcServiceError, WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import Long from 'long';
import type { Database } from '../db/database';
import { erase, erasureOf, type ErasureReport, type ErasureRequest, type ErasureTemporal } from '../db/erasure';
import { SourceRegistry } from '../providers/registry';
import { verifyStoredEvent, type Verification } from '../providers/verify-stored';
import { statusQuery, type BulkActionName, type BulkItemResult } from '../../contracts';
import { flowNamed } from '../flows';
import { loadBodyByWorkflowId } from '../db/event-bodies';
import { failureGroupMembers } from '../db/event-list';
import type { EventView } from './event-view';
import { bodyView, inboxView } from './inbox-view';
import { ledgerRecord, recordStopped } from '../db/ledger';
import { EventNotFoundError, EventRunningError, OperationRejectedError, SignalNotAwaitedError } from '../core/errors';
import { workflowState } from './availability';
import { parseResetTarget, resetPoint, type ResetTarget } from './reset-points';
import { findEvents, toSummary, type EventFilter, type EventSummary } from './visibility';

/**
 * Operations on event workflows, addressed by event ID (the workflow ID), shared by the
 * `durable-webhooks events` CLI and the `/admin` API.
 */
export class EventOperations implements ErasureTemporal {
  constructor(
    private readonly client: Client,
    private readonly options: { uiUrl: string; now?: () => Date; db?: Database; sources?: SourceRegistry },
  ) {}

  async show(eventId: string): Promise<EventView> {
    const handle = this.client.workflow.getHandle(eventId);
    let description: WorkflowExecutionDescription;
    try {
      description = await this.describe(eventId);
    } catch (error) {
      // No workflow: the body store may still have the event (held, ignored, not started yet).
      const inInbox = error instanceof EventNotFoundError && this.options.db ? await inboxView(this.options.db, eventId, this.uiLink(eventId)) : undefined;
      if (inInbox) return inInbox;
      throw error;
    }
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
    const erasure = this.options.db ? await erasureOf(this.options.db, eventId) : null;
    const body = this.options.db ? bodyView(await loadBodyByWorkflowId(this.options.db, eventId)) : null;
    const pendingActivities = (description.raw.pendingActivities ?? []).map((activity) => ({
      activityType: activity.activityType?.name ?? 'unknown',
      attempt: activity.attempt ?? 1,
      lastFailure: activity.lastFailure?.message ?? null,
    }));
    return {
      ...summary,
      summary: (await description.staticSummary()) ?? null,
      progress,
      ledger,
      erasure,
      body,
      result,
      failure,
      pendingActivities,
      uiUrl: this.uiLink(eventId),
    };
  }

  /** Events whose current run matches the filter (`findEvents`); a failure group's from the body store. */
  async list(filter: EventFilter, limit = 100): Promise<EventSummary[]> {
    return findEvents(this.client, filter, limit, {
      now: this.options.now?.(),
      groupMembers: (group, most) => failureGroupMembers(this.requireDatabase('A failure group'), group, most),
    });
  }

  /**
   * Sends one of the signals the workflow's flow declares, internal workflows included, with the
   * argument its check made of `data` (never `data` as given). A signal taken only while awaited
   * (`retryPayment`) is refused at other times and carries the wait's fields (the charge attempt it
   * answers), so that a reset's re-applied copy answers the same wait.
   */
  async signal(eventId: string, name: string, data?: unknown): Promise<void> {
    const { type } = await this.describe(eventId);
    const accepted = flowNamed(type)?.signals ?? [];
    const signal = accepted.find((each) => each.name === name);
    if (!signal) {
      const names = accepted.map((each) => each.name);
      throw new OperationRejectedError(
        `${type} does not handle the signal "${name}"; ${names.length ? `it accepts ${names.join(', ')}` : 'it accepts no signals'}.`,
      );
    }
    const checked = signal.read(data, { workflowId: eventId });
    if (!checked.ok) throw new OperationRejectedError(`${checked.error}.`);
    data = checked.value;
    const handle = this.client.workflow.getHandle(eventId);
    if (signal.onlyWhileAwaited) {
      const { waitingFor, awaiting } = await handle.query(statusQuery);
      if (!awaiting?.signals.includes(name)) {
        throw new SignalNotAwaitedError(`Event ${eventId} is not waiting for ${name}${waitingFor ? `; it waits for ${waitingFor}` : ''}. Nothing was sent.`);
      }
      data = { ...(data as object | undefined), ...awaiting.signalFields };
    }
    await handle.signal(signal.definition, ...(data === undefined ? [] : [data]));
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
    requireReason(reason, 'the termination', 'the history');
    await this.requireRunning(eventId);
    await this.client.workflow.getHandle(eventId).terminate(reason);
    if (this.options.db) await recordStopped(this.options.db, eventId, { terminated: reason });
  }

  /**
   * Resets the event's latest run to a workflow task, as `temporal workflow reset` does: the new
   * run keeps the run chain, so its ledger claim holds and finished steps are not repeated.
   * The TypeScript client has no reset method, so this calls the service directly.
   */
  async reset(
    eventId: string,
    to: ResetTarget,
    reason: string,
    requestId: string = randomUUID(),
  ): Promise<{ eventId: string; runId: string; resetToEventId: number }> {
    requireReason(reason, 'the reset', 'the workflow history');
    const { runId } = await this.describe(eventId);
    const { events } = await this.client.workflow.getHandle(eventId, runId).fetchHistory();
    const resetToEventId = resetPoint(events ?? [], to);
    const response = await this.client.workflowService.resetWorkflowExecution({
      namespace: this.client.options.namespace,
      workflowExecution: { workflowId: eventId, runId },
      reason,
      workflowTaskFinishEventId: Long.fromNumber(resetToEventId),
      requestId,
    });
    return { eventId, runId: response.runId!, resetToEventId };
  }

  /**
   * One bulk job's action on one event, or why it was skipped: a retry or reset leaves a completed
   * event alone (exactly once: nothing runs again) and a running one too; cancel, terminate and
   * signal act on running events only. `requestId` makes a repeated reset (the job's activity
   * retried) the same reset.
   */
  async apply(
    action: BulkActionName,
    eventId: string,
    options: { to?: string; reason: string; signal?: { name: string; data?: unknown }; requestId: string },
  ): Promise<BulkItemResult> {
    requireReason(options.reason, `the ${action}`, 'the history');
    let status: string;
    try {
      status = (await this.describe(eventId)).status.name;
    } catch (error) {
      if (error instanceof EventNotFoundError) return { eventId, outcome: 'skipped', detail: 'not found' };
      throw error;
    }
    try {
      switch (action) {
        case 'retry':
        case 'reset': {
          if (status === 'COMPLETED') return { eventId, outcome: 'skipped', detail: 'completed' };
          if (status === 'RUNNING') return { eventId, outcome: 'skipped', detail: 'running' };
          const reset = await this.reset(
            eventId,
            parseResetTarget(action === 'retry' ? 'last-failure' : (options.to ?? 'last-failure')),
            options.reason,
            options.requestId,
          );
          return { eventId, outcome: 'done', detail: `reset to history event ${reset.resetToEventId}; run ${reset.runId}` };
        }
        case 'cancel':
        case 'terminate':
        case 'signal': {
          if (status !== 'RUNNING') return { eventId, outcome: 'skipped', detail: 'closed' };
          if (action === 'cancel') await this.cancel(eventId);
          else if (action === 'terminate') await this.terminate(eventId, options.reason);
          else await this.signal(eventId, options.signal!.name, options.signal!.data);
          return {
            eventId,
            outcome: 'done',
            detail: action === 'signal' ? `sent ${options.signal!.name}` : action === 'cancel' ? 'cancel requested' : 'terminated',
          };
        }
      }
    } catch (error) {
      // What the operator must read (not awaited, no reset point): this event's failure, not the job's.
      if (error instanceof OperationRejectedError || error instanceof SignalNotAwaitedError || error instanceof EventRunningError)
        return { eventId, outcome: 'failed', detail: error.message };
      throw error;
    }
  }

  /** The stored body's signature, checked again with today's secrets (`verifyStoredEvent`). */
  async verify(eventId: string): Promise<Verification> {
    return verifyStoredEvent(this.requireDatabase('verify'), this.options.sources ?? new SourceRegistry([]), eventId);
  }

  /** The event's personal data, removed from every store (`erase`, beside the database it mostly changes). */
  async erase(eventId: string, request: ErasureRequest): Promise<ErasureReport> {
    requireReason(request.reason, 'the erasure (the request it answers)', 'the ledger');
    if (request.requestedBy !== undefined && request.requestedBy.trim() === '') throw new OperationRejectedError('"by" must name who asks for the erasure.');
    return erase(this.requireDatabase('erase'), this, eventId, request);
  }

  /** Whether Temporal has the event's workflow, and whether it runs. */
  async state(eventId: string): Promise<'running' | 'closed' | 'not retained'> {
    return workflowState(this.client, eventId);
  }

  /**
   * Deletes every run of the event's workflow ID: each run a reset or a redelivery after retention
   * made holds the same input. Visibility lists the closed runs; the current one is deleted by ID too.
   */
  async deleteExecution(eventId: string): Promise<void> {
    const namespace = this.client.options.namespace;
    const runIds = new Set<string>();
    for await (const execution of this.client.workflow.list({ query: `WorkflowId = ${JSON.stringify(eventId)}` })) runIds.add(execution.runId);
    for (const runId of runIds) await this.deleteRun(namespace, eventId, runId);
    await this.deleteRun(namespace, eventId, undefined);
  }

  private async deleteRun(namespace: string, workflowId: string, runId: string | undefined): Promise<void> {
    try {
      await this.client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } });
    } catch (error) {
      if (!isGrpcServiceError(error) || error.code !== grpcStatus.NOT_FOUND) throw error;
    }
  }

  uiLink(eventId: string): string {
    return `${this.options.uiUrl}/namespaces/${encodeURIComponent(this.client.options.namespace)}/workflows/${encodeURIComponent(eventId)}`;
  }

  private async describe(eventId: string): Promise<WorkflowExecutionDescription> {
    try {
      return await this.client.workflow.getHandle(eventId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new EventNotFoundError({ eventId: eventId });
      throw error;
    }
  }

  private requireDatabase(operation: string): Database {
    if (!this.options.db) throw new OperationRejectedError(`${operation} reads the body store: set DATABASE_URL.`);
    return this.options.db;
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

/**
 * The one check of an operator's reason, whichever surface (the CLI, `/admin`, the console) asked:
 * an action that changes an event says why, and the reason is kept where `keptIn` says.
 */
function requireReason(reason: unknown, what: string, keptIn: string): asserts reason is string {
  if (typeof reason !== 'string' || reason.trim() === '') throw new OperationRejectedError(`Give a reason for ${what}; it is kept in ${keptIn}.`);
}
