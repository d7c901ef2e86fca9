import { context, type Context } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Queryable } from '../db/database';
import { markStarted, wakeSweepers, type PendingStart } from '../db/inbox';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';
import { recordFailedStart, startPending } from './relay';
import { DEFAULT_START_TIMEOUT_MS, START_LEASE_MS } from './start-data';

/**
 * Fast-path starts made at once by one receiver. In a burst the answers come first: while more than
 * one delivery is being stored, the starts wait, instead of taking the cores from the deliveries
 * being answered (Temporal on the same machine spends CPU on every start too).
 */
export const FAST_PATH_CONCURRENCY = 4;
/** Starts waiting their turn, at most; those past it are left to the sweepers when their lease ends. */
export const FAST_PATH_QUEUE = 1_000;

/**
 * ACKNOWLEDGE=database's starts after the answer: each committed row's workflow is started by this
 * process in a few lanes, and, if that fails or the process dies, by a sweeper once its lease ends.
 */
export class FastPath {
  // Each waiting start with the time by which it must begin to end within its row's lease, and its
  // delivery's trace context (a lane runs in the context of the delivery that opened it).
  private readonly queue: Array<{ pending: PendingStart; beginBy: number; trace: Context }> = [];
  private readonly lanes = new Set<Promise<void>>();
  private closing = false;
  // Deliveries being stored now, and the lanes waiting for fewer.
  private stores = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly client: Client,
    private readonly db: Queryable,
    private readonly options: { taskQueue: string; logger: Logger },
  ) {}

  /** Runs a delivery's store, during which the lanes give way once another one is being stored too. */
  async whileStoring<T>(store: () => Promise<T>): Promise<T> {
    this.stores++;
    try {
      return await store();
    } finally {
      this.stores--;
      if (this.stores <= 1) this.resumeLanes();
    }
  }

  /** Queues a start, and opens a lane for it if fewer than FAST_PATH_CONCURRENCY run. */
  enqueue(pending: PendingStart): void {
    // Not queued (shutting down, or a burst beyond the queue): the row's lease ends, and a sweeper starts it.
    if (this.closing || this.queue.length >= FAST_PATH_QUEUE) return;
    this.queue.push({ pending, beginBy: Date.now() + START_LEASE_MS - DEFAULT_START_TIMEOUT_MS, trace: context.active() });
    if (this.lanes.size >= FAST_PATH_CONCURRENCY) return;
    const lane = this.runLane().finally(() => this.lanes.delete(lane));
    this.lanes.add(lane);
  }

  /** On shutdown: waits for the starts under way; those still queued are left to the sweepers. */
  async drain(): Promise<void> {
    this.closing = true;
    this.queue.length = 0;
    this.resumeLanes();
    await Promise.allSettled([...this.lanes]);
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
    if (this.stores <= 1 || this.closing) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private resumeLanes(): void {
    for (const resume of this.waiting.splice(0)) resume();
  }

  /** Starts the workflow right after the answer; a failure leaves the row to the sweepers, woken now. */
  private async startNow(pending: PendingStart): Promise<void> {
    try {
      await startPending(this.client, this.options.taskQueue, pending);
      await markStarted(this.db, [pending]);
    } catch (error) {
      this.options.logger.warn(
        { eventId: pending.eventId, workflowId: pending.workflowId, error: errorLine(error) },
        'workflow not started yet; a sweeper will start it',
      );
      await recordFailedStart(this.db, pending, error)
        .then(() => wakeSweepers(this.db))
        .catch(() => undefined);
    }
  }
}
