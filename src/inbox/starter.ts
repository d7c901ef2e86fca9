import type { Client } from '@temporalio/client';
import type { EventVia } from '../../contracts';
import type { Queryable } from '../db/database';
import { storeBody } from '../db/event-bodies';
import { deferStart, markStarted, wakeSweepers, type PendingStart } from '../db/inbox';
import { BodyStoreUnavailableError } from '../errors';
import type { Logger } from '../logger';
import { START_LEASE_MS, startOptions, type EventStarter, type ReceivedEvent, type StartResult, type StartTarget } from '../temporal/start-event';
import { retryDelayMs, startPending } from './relay';

/**
 * ACKNOWLEDGE=database: a delivery is answered once its body and what to start for it are committed
 * to PostgreSQL, 202 for a new event and 200 for one stored before (from the same insert, with no
 * call to Temporal). Its workflow is started right after the answer by this process (the fast
 * path), or, if that fails or the process dies, by a sweeper. The workflow ID is still the event ID,
 * with REJECT_DUPLICATE: the engine stays the dedupe of processing.
 */
export class InboxEventStarter implements EventStarter {
  readonly needs = 'PostgreSQL';
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly client: Client,
    private readonly db: Queryable,
    private readonly options: { taskQueue: string; logger: Logger },
  ) {}

  async start(event: ReceivedEvent, target: StartTarget, via: EventVia = 'delivery'): Promise<StartResult> {
    const { spec, options } = startOptions(event, target, via, this.options.taskQueue);
    const { workflowId } = options;
    const pending = { source: event.source, eventId: event.id, workflowId, via, start: spec, attempts: 0 };
    let stored;
    try {
      stored = await storeBody(this.db, { ...pending, provider: event.provider, receivedAt: event.receivedAt, bodySha256: event.bodySha256, leaseMs: START_LEASE_MS }, event.body);
    } catch (error) {
      throw new BodyStoreUnavailableError(event.id, { cause: error });
    }
    if (!stored.stored) return { status: 'duplicate', workflowId, started: stored.startedAt !== null };
    const started = this.startNow(pending).finally(() => this.inFlight.delete(started));
    this.inFlight.add(started);
    return { status: 'accepted', workflowId };
  }

  /** The fast path: starts the workflow right after the answer; a failure leaves the row to the sweepers, woken now. */
  private async startNow(pending: PendingStart): Promise<void> {
    try {
      await startPending(this.client, this.options.taskQueue, pending);
      await markStarted(this.db, [pending]);
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      this.options.logger.warn({ eventId: pending.eventId, workflowId: pending.workflowId, error: reason }, 'workflow not started yet; a sweeper will start it');
      await deferStart(this.db, pending, reason, retryDelayMs(0))
        .then(() => wakeSweepers(this.db))
        .catch(() => undefined);
    }
  }

  /** Waits for the starts this process began after answering (on shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
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
