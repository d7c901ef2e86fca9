import { eventWorkflowId, type BackfillCounts } from '../../contracts';

export type { BackfillCounts };
import type { Queryable } from '../db/database';
import { isRecorded } from '../db/ledger';
import { checkEventIdentity } from '../providers/identity';
import type { Source } from '../providers/registry';
import type { VerifiedEvent } from '../providers/types';
import type { EventStarter } from '../intake/port';

/** One event a provider's API lists: its ID and type at once, its full body when read. */
export interface ListedEvent {
  id: string;
  type: string;
  read(): Promise<VerifiedEvent>;
  /** Asks the provider to deliver it again, signed, instead of starting it here (GitHub). */
  redeliver?(): Promise<void>;
}

export interface BackfillLine {
  eventId: string;
  type: string;
  /** `started`, `already recorded`, `would start` (dry run), `redelivery requested`, or `failed: <reason>`. */
  outcome: string;
}

export interface BackfillDeps {
  source: Source;
  /** Stores each body and starts the event; needed only to start (not for a dry run or a redelivery). */
  starter?: EventStarter;
  /** True when Temporal has a workflow with this ID (running or closed within retention). */
  exists(workflowId: string): Promise<boolean>;
  /** The ledger, when DATABASE_URL is set: it knows events Temporal has forgotten after retention. */
  db?: Queryable;
  mode?: 'start' | 'dry-run' | 'redeliver';
  /** Counts to continue from (a resumed reconciliation). */
  counts?: BackfillCounts;
  now?: () => Date;
}

/**
 * Starts every listed event the receiver does not have, the way it starts a delivery: the same
 * checks, workflow ID, reuse policy, search attributes and summary, through the same starter. What
 * the ledger or Temporal has is reported and never read or started again. Events from a provider's
 * API are not signed: they came over an authenticated API call, which is the trust boundary.
 */
export async function backfill(
  events: AsyncIterable<ListedEvent>,
  deps: BackfillDeps,
  /** Called after each event with its line and the counts so far (which start from `deps.counts`). */
  onLine: (line: BackfillLine, counts: BackfillCounts) => void = () => {},
): Promise<BackfillCounts> {
  const counts: BackfillCounts = { found: 0, alreadyRecorded: 0, started: 0, failed: 0, ...deps.counts };
  for await (const listed of events) {
    counts.found++;
    const outcome = await settle(listed, deps).catch((error: Error) => `failed: ${error.message}`);
    if (outcome === 'already recorded') counts.alreadyRecorded++;
    else if (outcome.startsWith('failed')) counts.failed++;
    else counts.started++;
    onLine({ eventId: listed.id, type: listed.type, outcome }, { ...counts });
  }
  return counts;
}

async function settle(listed: ListedEvent, { source, starter, exists, db, mode = 'start', now = () => new Date() }: BackfillDeps): Promise<string> {
  checkEventIdentity(listed, source.adapter, source);
  if (db && (await isRecorded(db, source.name, listed.id))) return 'already recorded';
  if (await exists(eventWorkflowId(source.workflowIdPrefix, listed.id))) return 'already recorded';
  if (mode === 'dry-run') return 'would start';
  if (mode === 'redeliver') {
    if (!listed.redeliver) throw new Error('this provider cannot redeliver');
    await listed.redeliver();
    return 'redelivery requested';
  }
  if (!starter) throw new Error('starting an event needs the body store (DATABASE_URL)');
  const verified = await listed.read();
  // The provider's API gives the event, not the signed delivery: its body is stored without signature headers.
  const body = { raw: Buffer.from(JSON.stringify(verified.payload)), contentType: 'application/json', signatureHeaders: {} };
  const result = await starter.start(
    { source: source.name, provider: source.adapter.kind, ...verified, receivedAt: now().toISOString(), body },
    source,
    'backfill',
  );
  // Stored now and started, or stored to start later (paced by the source's rate, held), or ignored by a route: new to us.
  return result.status === 'duplicate' ? 'already recorded' : 'started';
}

/** `found 50 · already recorded 3 · started 47 · failed 0` */
export function summaryLine(counts: BackfillCounts, mode: BackfillDeps['mode'] = 'start'): string {
  const started = { start: 'started', 'dry-run': 'would start', redeliver: 'redelivery requested' }[mode];
  return `found ${counts.found} · already recorded ${counts.alreadyRecorded} · ${started} ${counts.started} · failed ${counts.failed}`;
}
