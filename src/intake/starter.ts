import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EventVia } from '../../contracts';
import type { Acknowledge } from '../config/receiver';
import type { Queryable } from '../db/database';
import { storeBody, type Skipped, type Stored } from '../db/event-bodies';
import { markStarted, type PendingStart } from '../db/inbox';
import { BodyStoreUnavailableError, EventIdConflictError, TemporalUnavailableError } from '../core/delivery-errors';
import { silentLogger, type Logger } from '../core/logger';
import { isUnavailable } from '../temporal/availability';
import { FastPath } from './fast-path';
import type { EventStarter, ReceivedEvent, StartResult, StartTarget } from './port';
import { DEFAULT_START_TIMEOUT_MS, START_LEASE_MS, startOptions } from './start-data';
import { EventWaits, waitKeysOf } from './waits';

export interface IntakeOptions {
  acknowledge: Acknowledge;
  taskQueue: string;
  /** How long a start waits for Temporal before the answer is 503. @default DEFAULT_START_TIMEOUT_MS */
  startTimeoutMs?: number;
  /** Where the fast path says a start failed (ACKNOWLEDGE=database, where it is required), and matching an event against the waits did. */
  logger?: Logger;
}

/**
 * The one starter: every delivery, redelivery and backfilled event comes through here. It stores the
 * body first, then decides once, whatever the acknowledge mode: a conflict, a replay, ignored, filtered,
 * held, paced, a duplicate, or new. Only what a new event waits for differs: the start itself
 * (`temporal`), or the commit (`database`). The workflow ID is the event ID with REJECT_DUPLICATE
 * either way: the engine stays the dedupe of processing.
 */
export class EventIntake implements EventStarter {
  readonly needs: 'PostgreSQL' | 'Temporal';
  private readonly fastPath: FastPath | undefined;
  private readonly waits: EventWaits;

  constructor(
    private readonly client: Client,
    /** The body store: every body is stored here before its workflow starts. */
    private readonly db: Queryable,
    private readonly options: IntakeOptions,
  ) {
    this.needs = options.acknowledge === 'database' ? 'PostgreSQL' : 'Temporal';
    this.waits = new EventWaits(db, client, options.logger ?? silentLogger);
    if (options.acknowledge === 'database') {
      if (!options.logger) throw new Error('ACKNOWLEDGE=database needs a logger for its fast path.');
      this.fastPath = new FastPath(client, db, { taskQueue: options.taskQueue, logger: options.logger });
    }
  }

  async start(event: ReceivedEvent, target: StartTarget, via: EventVia = 'delivery'): Promise<StartResult> {
    const { spec, options, skipped } = startOptions(event, target, via, this.options.taskQueue);
    const { workflowId } = options;
    const pending: PendingStart = { source: event.source, eventId: event.id, workflowId, via, start: spec, attempts: 0 };
    const waitKeys = waitKeysOf(event.type, event.payload);
    const stored = await this.store(event, via, pending, skipped, waitKeys);
    if ('takenBy' in stored) throw new EventIdConflictError({ source: event.source, eventId: event.id, otherSource: stored.takenBy });
    if ('replayOf' in stored) return { status: 'duplicate', workflowId, replayOf: stored.replayOf };
    // A new event of an awaited type goes to the waiters waiting for it (a held one, at its release).
    if (stored.stored && stored.heldBy === null && waitKeys) this.waits.arrivedLater(event.source, event.id);
    if (skipped) return stored.stored ? { status: skipped, workflowId } : { status: 'duplicate', workflowId, started: false };
    if (stored.stored && stored.heldBy) return { status: 'held', workflowId, hold: stored.heldBy };
    // Paced by its source's standing rate or a release: a sweeper starts it when the budget allows.
    if (stored.stored && stored.pacedBy) return { status: 'accepted', workflowId };
    if (this.fastPath) {
      if (!stored.stored) return { status: 'duplicate', workflowId, started: stored.startedAt !== null };
      this.fastPath.enqueue(pending);
      return { status: 'accepted', workflowId };
    }
    if (!stored.stored && stored.waiting) return { status: 'duplicate', workflowId, started: false };
    return this.startNow(pending, options);
  }

  private async store(
    event: ReceivedEvent,
    via: EventVia,
    pending: PendingStart,
    skipped: Skipped | undefined,
    waitKeys: string[] | undefined,
  ): Promise<Stored> {
    const store = () =>
      storeBody(
        this.db,
        {
          ...pending,
          via,
          provider: event.provider,
          receivedAt: event.receivedAt,
          bodySha256: event.bodySha256,
          leaseMs: START_LEASE_MS,
          ...(skipped && { skipped }),
          ...(waitKeys && { waitKeys }),
        },
        event.body,
      );
    try {
      return await (this.fastPath ? this.fastPath.whileStoring(store) : store());
    } catch (error) {
      throw new BodyStoreUnavailableError({ eventId: event.id }, { cause: error });
    }
  }

  /** ACKNOWLEDGE=temporal: the answer waits for Temporal's. A run that exists makes it a duplicate, with that run's state. */
  private async startNow(pending: PendingStart, options: ReturnType<typeof startOptions>['options']): Promise<StartResult> {
    const { workflowId } = pending;
    try {
      const handle = await this.withDeadline(() => this.client.workflow.start(pending.start.flow, options));
      await this.started(pending);
      return { status: 'started', workflowId, runId: handle.firstExecutionRunId };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        await this.started(pending);
        return { status: 'duplicate', workflowId, state: await this.stateOf(workflowId) };
      }
      if (isUnavailable(error)) throw new TemporalUnavailableError({ eventId: pending.eventId }, { cause: error });
      throw error;
    }
  }

  /**
   * Marks the body's start confirmed in the inbox. Best effort: when it fails, a sweeper takes the
   * row after its lease, finds the workflow started, and marks it then.
   */
  private async started(key: { source: string; eventId: string }): Promise<void> {
    await markStarted(this.db, [key]).catch(() => undefined);
  }

  /**
   * The existing run's state, for the duplicate's answer: a redelivery of a failed event is still
   * a duplicate (the engine stays the dedupe), but says so, for whoever reads the provider's log.
   */
  private async stateOf(workflowId: string): Promise<string | undefined> {
    try {
      const { status } = await this.withDeadline(() => this.client.workflow.getHandle(workflowId).describe());
      return status.name.toLowerCase();
    } catch {
      return undefined;
    }
  }

  /** True when what a 2xx waits for answers: the body store (ACKNOWLEDGE=database), or Temporal's namespace. */
  async ready(): Promise<boolean> {
    try {
      if (this.fastPath) await this.db.query('SELECT 1');
      else await this.withDeadline(() => this.client.workflowService.describeNamespace({ namespace: this.client.options.namespace }));
      return true;
    } catch {
      return false;
    }
  }

  /** On shutdown: waits for the fast path's starts under way; those still queued are left to the sweepers. */
  async drain(): Promise<void> {
    await this.fastPath?.drain();
  }

  private withDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.client.connection.withDeadline(Date.now() + (this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS), fn);
  }
}
