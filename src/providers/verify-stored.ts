import type { Queryable } from '../db/database';
import { loadBodyByWorkflowId } from '../db/event-bodies';
import { EventNotFoundError } from '../core/errors';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import type { SourceRegistry } from './registry';

/** What `events verify` found: the stored body's signature checked against today's secrets. */
export interface Verification {
  eventId: string;
  source: string;
  verified: boolean;
  /** Whether the body is there to check: a purged one (past BODY_RETENTION) is not a failed check. */
  body: 'stored' | 'erased' | 'purged';
  /** Why not, or which check passed. */
  detail: string;
  bytes: number;
  sha256: string;
  receivedAt: string;
}

/**
 * Checks a stored body's signature again, with the secrets configured today, at the time it was
 * received (so the timestamp tolerance holds): proof of what was received, and a check of rotated
 * secrets. `eventId` is the event's workflow ID.
 */
export async function verifyStoredEvent(db: Queryable, sources: SourceRegistry, eventId: string): Promise<Verification> {
  const stored = await loadBodyByWorkflowId(db, eventId);
  if (!stored) throw new EventNotFoundError({ eventId: eventId, why: 'the body store has no event with that ID' });
  const result = (verified: boolean, detail: string, body: Verification['body'] = 'stored'): Verification => ({
    eventId,
    source: stored.source,
    verified,
    body,
    detail,
    bytes: stored.size,
    sha256: stored.sha256,
    receivedAt: stored.receivedAt.toISOString(),
  });
  if (stored.purgedAt)
    return result(false, `the body was purged at ${stored.purgedAt.toISOString()}, past BODY_RETENTION; its size and sha256 are those received`, 'purged');
  if (!stored.body) return result(false, `the body was erased at ${stored.erasedAt?.toISOString()}`, 'erased');
  if (stored.via !== 'delivery') return result(false, `it came from the provider's API (${stored.via}), not as a signed delivery`);
  const source = sources.get(stored.source);
  if (source.adapter.signatureHeaders.length > 0 && Object.keys(stored.signatureHeaders).length === 0) {
    return result(false, `it was an item of a ${source.adapter.kind} batch, whose signature covers the whole delivery, which is not kept`);
  }
  try {
    const { events } = await source.adapter.verify({ rawBody: stored.body, headers: stored.signatureHeaders, receivedAt: stored.receivedAt });
    const ids = events.map((event) => event.id);
    if (!ids.includes(stored.eventId)) return result(false, `the signed body is event ${ids.join(', ') || '(none)'}, not ${stored.eventId}`);
    return result(true, `the ${source.adapter.kind} signature matches a secret configured for source "${source.name}"`);
  } catch (error) {
    if (error instanceof SignatureVerificationError || error instanceof MalformedEventError) return result(false, error.message);
    throw error;
  }
}
