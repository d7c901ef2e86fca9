import type { Queryable } from '../db/database';
import { purgeExpired, type Purged, type Retention } from '../db/retention';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';

/** How often a worker purges what is past its retention. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Applies BODY_RETENTION and DEDUPE_RETENTION to the body store: every worker purges once at start
 * and then hourly (src/db/retention.ts says what goes). A pass that fails is logged and tried at the
 * next hour; nothing it would remove is needed before then.
 */
export class RetentionPurger {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> = Promise.resolve();
  // Stopping: a pass under way ends after its batch (a first purge of a large store can take minutes).
  private stopping = false;

  constructor(
    private readonly db: Queryable,
    private readonly retention: Retention,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.retention.bodyMs === null && this.retention.dedupeMs === null) return;
    const run = () => {
      this.pass = this.purge().catch((error: unknown) =>
        this.logger.warn({ error: errorLine(error) }, 'retention: the body store did not answer; trying again in an hour'),
      );
      this.timer = setTimeout(run, RETENTION_INTERVAL_MS).unref();
    };
    run();
  }

  /** One pass, now. */
  async purge(): Promise<Purged> {
    const purged = await purgeExpired(this.db, this.retention, { stopping: () => this.stopping });
    if (purged.bodies > 0 || purged.rows > 0 || purged.waiters > 0)
      this.logger.info(purged, 'retention: purged bodies past BODY_RETENTION, and rows and waits past DEDUPE_RETENTION');
    return purged;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.pass;
  }
}
