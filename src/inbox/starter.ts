import { errorLine } from '../redact';
import { context, type Context } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { EventVia } from '../../contracts';
import type { Queryable } from '../db/database';
import { storeBody } from '../db/event-bodies';
import { markStarted, wakeSweepers, type PendingStart } from '../db/inbox';
import { BodyStoreUnavailableError, EventIdConflictError } from '../errors';
import type { Logger } from '../logger';
import { DEFAULT_START_TIMEOUT_MS, START_LEASE_MS, startOptions, type EventStarter, type ReceivedEvent, type StartResult, type StartTarget } from '../temporal/start-event';
import { recordFailedStart, startPending } from './relay';

/**
 * Fast-path starts made at once by one receiver. In a burst the answers come first: while more than
 * one delivery is being stored, the starts wait, instead of taking the cores from the deliveries
 * being answered (Temporal on the same machine spends CPU on every start too).
 */
export const FAST_PATH_CONCURRENCY = 4;
/** Starts waiting their turn, at most; those past it are left to the sweepers when their lease ends. */
export const FAST_PATH_QUEUE = 1_000;

/**
 * ACKNOWLEDGE=database: a delivery is answered once its body and what to start for it are committed
 * to PostgreSQL, 202 for a new event and 200 for one stored before (from the same insert, with no
 * call to Temporal). Its workflow is started right after the answer by this process (the fast
 * path), or, if that fails or the process dies, by a sweeper. The workflow ID is still the event ID,
 * with REJECT_DUPLICATE: the engine stays the dedupe of processing.
 */
export class InboxEventStarter implements EventStarter {
  readonly needs = 'PostgreSQL';
  // Each waiting start with the time by which it must begin to end within its row's lease, and its
  // delivery's trace context (a lane runs in the context of the delivery that opened it).
  private readonly queue: Array<{ pending: PendingStart; beginBy: number; trace: Context }> = [];
  private readonly lanes = new Set<Promise<void>>();
  private closing = false;
  // Deliveries being stored now, and the lanes waiting for fewer.
  private storing = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly client: Client,
    private readonly db: Queryable,
    private readonly options: { taskQueue: string; logger: Logger },
  ) {}

  async start(event: ReceivedEvent, target: StartTarget, via: EventVia = 'delivery'): Promise<StartResult> {
    const { spec, options, ignored } = startOptions(event, target, via, this.options.taskQueue);
    const { workflowId } = options;
    const pending = { source: event.source, eventId: event.id, workflowId, via, start: spec, attempts: 0 };
    let stored;
    this.storing++;
    try {
      stored = await storeBody(this.db, { ...pending, provider: event.provider, receivedAt: event.receivedAt, bodySha256: event.bodySha256, leaseMs: START_LEASE_MS, ignored }, event.body);
    } catch (error) {
      throw new BodyStoreUnavailableError(event.id, { cause: error });
    } finally {
      this.storing--;
      if (this.storing <= 1) this.resumeLanes();
    }
    if ('takenBy' in stored) throw new EventIdConflictError(event.source, event.id, stored.takenBy);
    if ('replayOf' in stored) return { status: 'duplicate', workflowId, replayOf: stored.replayOf };
    if (!stored.stored) return { status: 'duplicate', workflowId, started: !ignored && stored.startedAt !== null };
    if (ignored) return { status: 'ignored', workflowId };
    if (stored.heldBy) return { status: 'held', workflowId, hold: stored.heldBy };
    // Paced by its source's standing rate: a sweeper starts it when the budget allows.
    if (!stored.pacedBy) this.enqueue(pending);
    return { status: 'accepted', workflowId };
  }

  /** Queues the fast path's start, and opens a lane for it if fewer than FAST_PATH_CONCURRENCY run. */
  private enqueue(pending: PendingStart): void {
    // Not queued (shutting down, or a burst beyond the queue): the row's lease ends, and a sweeper starts it.
    if (this.closing || this.queue.length >= FAST_PATH_QUEUE) return;
    this.queue.push({ pending, beginBy: Date.now() + START_LEASE_MS - DEFAULT_START_TIMEOUT_MS, trace: context.active() });
    if (this.lanes.size >= FAST_PATH_CONCURRENCY) return;
    const lane = this.runLane().finally(() => this.lanes.delete(lane));
    this.lanes.add(lane);
  }

  private async runLane(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      await this.quiet();
      // Shutting down, or too late to end within its lease: the row is the sweepers' now.
      const { pending, beginBy, trace } = next;
      if (!this.closing && Date.now() <= beginBy) await context.with(trace, () => this.startNow(pending));
    }
  }

  /** Resolves once at most one delivery is being stored (at once, at the pace of a steady stream). */
  private quiet(): Promise<void> {
    if (this.storing <= 1 || this.closing) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private resumeLanes(): void {
    for (const resume of this.waiting.splice(0)) resume();
  }

  /** The fast path: starts the workflow right after the answer; a failure leaves the row to the sweepers, woken now. */
  private async startNow(pending: PendingStart): Promise<void> {
    try {
      await startPending(this.client, this.options.taskQueue, pending);
      await markStarted(this.db, [pending]);
    } catch (error) {
      this.options.logger.warn({ eventId: pending.eventId, workflowId: pending.workflowId, error: errorLine(error) }, 'workflow not started yet; a sweeper will start it');
      await recordFailedStart(this.db, pending, error)
        .then(() => wakeSweepers(this.db))
        .catch(() => undefined);
    }
  }

  /** On shutdown: waits for the starts under way; those still queued are left to the sweepers. */
  async drain(): Promise<void> {
    this.closing = true;
    this.queue.length = 0;
    this.resumeLanes();
    await Promise.allSettled([...this.lanes]);
  }

  /** True when the body store answers: in this mode, a 2xx needs PostgreSQL, not Temporal. */
  async ready(): Promise<boolean> {
    try {
      await this.db.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }
}
