import type { WebhookEvent } from '../../contracts';
import { eventWorkflowId } from '../../contracts';
import type { Queryable } from '../db/database';
import { isRecorded } from '../db/ledger';
import { checkEventIdentity } from '../providers/identity';
import type { Source } from '../providers/registry';
import type { VerifiedEvent } from '../providers/types';
import type { EventStarter } from '../temporal/start-event';

export interface BackfillLine {
  eventId: string;
  type: string;
  /** `started`, `already recorded`, `would start` (dry run) or `failed: <reason>`. */
  outcome: string;
}

export interface BackfillCounts {
  found: number;
  alreadyRecorded: number;
  /** Started, or in a dry run, would start. */
  started: number;
  failed: number;
}

export interface BackfillDeps {
  source: Source;
  starter: EventStarter;
  /** The ledger, when DATABASE_URL is set: it knows events Temporal has forgotten after retention. */
  db?: Queryable;
  /** Lists instead of starting; `exists` tells what Temporal already has. */
  dryRun?: { exists(workflowId: string): Promise<boolean> };
  now?: () => Date;
}

/**
 * Starts every listed event the way the receiver starts a delivery: the same checks, workflow ID,
 * reuse policy, search attributes and summary, through the same starter. The engine refuses what
 * it has; the ledger answers for what it has forgotten. Events from a provider's API are not signed:
 * they came over an authenticated API call, which is the trust boundary.
 */
export async function backfill(events: AsyncIterable<VerifiedEvent>, deps: BackfillDeps, onLine: (line: BackfillLine) => void = () => {}): Promise<BackfillCounts> {
  const counts: BackfillCounts = { found: 0, alreadyRecorded: 0, started: 0, failed: 0 };
  const now = deps.now ?? (() => new Date());
  for await (const verified of events) {
    counts.found++;
    const outcome = await startOne(verified, deps, now).catch((error: Error) => `failed: ${error.message}`);
    if (outcome === 'already recorded') counts.alreadyRecorded++;
    else if (outcome.startsWith('failed')) counts.failed++;
    else counts.started++;
    onLine({ eventId: verified.id, type: verified.type, outcome });
  }
  return counts;
}

async function startOne(verified: VerifiedEvent, { source, starter, db, dryRun }: BackfillDeps, now: () => Date): Promise<string> {
  checkEventIdentity(verified, source.adapter, source);
  if (db && (await isRecorded(db, source.name, verified.id))) return 'already recorded';
  if (dryRun) return (await dryRun.exists(eventWorkflowId(source.workflowIdPrefix, verified.id))) ? 'already recorded' : 'would start';
  const event: WebhookEvent = { source: source.name, provider: source.adapter.kind, ...verified, receivedAt: now().toISOString() };
  const result = await starter.start(event, source.workflowIdPrefix);
  return result.status === 'started' ? 'started' : 'already recorded';
}

/** `found 50 · already recorded 3 · started 47 · failed 0` */
export function summaryLine(counts: BackfillCounts, dryRun = false): string {
  return `found ${counts.found} · already recorded ${counts.alreadyRecorded} · ${dryRun ? 'would start' : 'started'} ${counts.started} · failed ${counts.failed}`;
}
