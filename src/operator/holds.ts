import { OperationRejectedError } from '../core/errors';
import type { Database } from '../db/database';
import { sourceHasEvents } from '../db/event-bodies';
import { createHold, listHolds, releaseHolds, type Hold } from '../db/holds';

/**
 * Holds as an operator asks for them, with one input check for the CLI (`hold`, `release`, `holds`)
 * and `/admin/holds`: its pattern and reason are text, and its source is one this deployment knows
 * (configured where it is asked, or with events in the body store), so a typo never holds nothing
 * while the real source's events keep starting. The receiver has every source (`complete`), and
 * refuses any other; a CLI may lack a source's secrets, so it holds an unknown source (before a sale,
 * say) and says so. A release may name any source, such as one the configuration no longer has.
 */
export class HoldOperations {
  constructor(
    private readonly db: Database,
    private readonly sources: readonly string[],
    private readonly complete: boolean,
  ) {}

  /** The hold; `unknownSource` says why its source may be a typo, where the sources known here may not be all. */
  async hold(request: { source: unknown; type?: unknown; reason?: unknown }, by: string): Promise<Hold & { unknownSource?: string }> {
    const { source, type, reason } = request;
    if (typeof source !== 'string') throw new OperationRejectedError(`"source" must name the source to hold, one of ${this.sources.join(', ')}.`);
    const known = this.sources.includes(source) || (await sourceHasEvents(this.db, source));
    const unknown = `"${source}" is configured here as no source, and the body store has no event of it (sources here: ${this.sources.join(', ')})`;
    if (!known && this.complete) throw new OperationRejectedError(`${unknown}.`);
    const hold = await createHold(this.db, {
      source,
      typePattern: text(type, 'type', 'an event type, or a prefix ending in "*"'),
      reason: text(reason, 'reason', 'text'),
      by,
    });
    return known
      ? hold
      : {
          ...hold,
          unknownSource: `${unknown}: the hold holds nothing until such a source delivers. A typo? Release it (durable-webhooks release ${hold.id}).`,
        };
  }

  async release(which: { id: string } | { source: unknown; type?: unknown }, options: { rate?: number }, by: string) {
    if ('id' in which) return releaseHolds(this.db, which, { rate: options.rate, by });
    if (typeof which.source !== 'string') throw new OperationRejectedError('"source" must name the source whose holds to release.');
    return releaseHolds(
      this.db,
      { source: which.source, typePattern: text(which.type, 'type', 'the pattern of the hold to release') },
      { rate: options.rate, by },
    );
  }

  list(options: { all?: boolean } = {}): Promise<Hold[]> {
    return listHolds(this.db, options);
  }
}

/** An optional text field, refused by name when it is something else. */
function text(value: unknown, name: string, what: string): string | undefined {
  if (value !== undefined && typeof value !== 'string') throw new OperationRejectedError(`"${name}" must be ${what}.`);
  return value;
}
