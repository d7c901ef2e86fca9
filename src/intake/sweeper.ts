import { messageWithCauses } from '../core/errors';
import { errorLine, withoutAddresses } from '../core/redact';
import type { Client } from '@temporalio/client';
import type { Database } from '../db/database';
import { claimDueStarts, claimPacedStarts, INBOX_CHANNEL, markStarted, startBudgets, type PendingStart } from '../db/inbox';
import type { Logger } from '../core/logger';
import { recordFailedStart, startPending } from './relay';
import { EventWaits, indexStoredEvents } from './waits';

export interface SweeperOptions {
  taskQueue: string;
  logger: Logger;
  /** How often it looks when nothing wakes it. @default 1 s */
  pollMs?: number;
  /** Rows claimed at once, and started concurrently. @default 100 */
  batch?: number;
  /** How long a claimed row is this sweeper's before another may take it. @default 30 s */
  leaseMs?: number;
  /** Refused starts of one row before it is dead-lettered. @default MAX_START_ATTEMPTS */
  maxAttempts?: number;
}

const CONCURRENCY = 16;
/** How often a sweeper indexes the stored events a receiver on an older build stored without their waits' keys. */
const WAIT_INDEX_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Starts the workflows of committed bodies nobody started: the receiver's fast path failed (Temporal
 * down), or its process died between the commit and the start. Any receiver or worker runs one; they
 * share the work through `FOR UPDATE SKIP LOCKED` and leases (src/db/inbox.ts), are woken by
 * LISTEN/NOTIFY, and poll as a fallback. Rows paced by a budget (a release's rate, a source's
 * standing rate) are claimed as its tokens allow, and the sweeper wakes when the next ones are due.
 * It also does what the intake left undone for waits (src/intake/waits.ts). A relay into Temporal,
 * not a job system: the processing is the workflow's.
 */
export class StartSweeper {
  private running = false;
  // Told to stop: a pass under way takes no further row (a shutdown waits one round of starts, not a batch's).
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private loop: Promise<void> | undefined;
  private indexing: Promise<unknown> = Promise.resolve();
  private indexTimer: NodeJS.Timeout | undefined;
  // When a paced budget next has tokens for a claim, after the last pass; undefined when none waits.
  private pacedWaitMs: number | undefined;
  private readonly waits: EventWaits;

  constructor(
    private readonly db: Database,
    private readonly client: Client,
    private readonly options: SweeperOptions,
  ) {
    this.waits = new EventWaits(db, client, options.logger);
  }

  async start(): Promise<void> {
    this.running = true;
    this.stopListening = await this.db
      .listen?.(INBOX_CHANNEL, () => this.wake())
      .catch((error: unknown) => {
        this.options.logger.warn({ error: errorLine(error) }, 'start sweeper: LISTEN failed; polling only');
        return undefined;
      });
    this.loop = this.run();
    this.index();
  }

  /**
   * Gives stored events of awaited types the keys a build without their wait did not (src/intake/waits.ts
   * indexStoredEvents): at start, then hourly, for what receivers still on an older build store.
   */
  private index(): void {
    this.indexing = indexStoredEvents(this.db, { stopping: () => !this.running })
      .then(
        (changed) => changed > 0 && this.options.logger.info({ changed }, 'waits: indexed stored events that a build without their wait stored'),
        (error: unknown) => this.options.logger.warn({ error: errorLine(error) }, 'waits: indexing stored events failed; the next pass tries again'),
      )
      .finally(() => {
        if (this.running) this.indexTimer = setTimeout(() => this.index(), WAIT_INDEX_INTERVAL_MS).unref();
      });
  }

  /** Looks now instead of at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    clearTimeout(this.indexTimer);
    this.wake();
    await Promise.all([this.loop, this.indexing]);
    const stopListening = this.stopListening;
    this.stopListening = undefined;
    await stopListening?.();
  }

  /** One pass: claims due rows (unpaced, then each budget's as its tokens allow) and starts them; the number claimed. */
  async sweep(): Promise<number> {
    const { batch = 100, leaseMs = 30_000 } = this.options;
    const due = await claimDueStarts(this.db, batch, leaseMs);
    this.pacedWaitMs = undefined;
    for (const budget of await startBudgets(this.db)) {
      const { claimed, waitMs } = await claimPacedStarts(this.db, budget, batch, leaseMs);
      due.push(...claimed);
      if (waitMs !== null) this.pacedWaitMs = Math.min(this.pacedWaitMs ?? waitMs, waitMs);
    }
    const started: PendingStart[] = [];
    let next = 0;
    const lane = async () => {
      // What it claimed and did not start once told to stop is due again when its lease ends.
      while (next < due.length && !this.stopping) {
        const pending = due[next++]!;
        try {
          await startPending(this.client, this.options.taskQueue, pending);
          started.push(pending);
        } catch (error) {
          if (await recordFailedStart(this.db, pending, error, this.options.maxAttempts)) {
            this.options.logger.error(
              { eventId: pending.eventId, workflowId: pending.workflowId, attempts: pending.attempts + 1, error: withoutAddresses(messageWithCauses(error)) },
              'start sweeper: Temporal keeps refusing this start; dead-lettered until durable-webhooks inbox retry',
            );
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, lane));
    await markStarted(this.db, started);
    if (due.length > started.length)
      this.options.logger.warn(
        { claimed: due.length, started: started.length },
        this.stopping
          ? 'start sweeper: stopped with claimed starts not made; they are due again once their lease ends'
          : 'start sweeper: Temporal did not confirm every start; they are due again',
      );
    // What the intake left undone for waits: events not matched yet, matches Temporal did not take.
    if (!this.stopping) await this.waits.sweep(batch);
    return due.length;
  }

  private async run(): Promise<void> {
    const { pollMs = 1_000, batch = 100 } = this.options;
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.sweep();
      } catch (error) {
        this.options.logger.warn({ error: errorLine(error) }, 'start sweeper: the body store did not answer');
      }
      // A full batch means more may be due: go on at once; a paced budget's next tokens may come sooner than the poll.
      if (claimed < batch && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(pollMs, this.pacedWaitMs ?? pollMs));
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    }
  }
}
