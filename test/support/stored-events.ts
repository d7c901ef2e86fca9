import { ProviderKind } from '../../contracts';
import type { Queryable } from '../../src/db/database';
import { storeBody, type Skipped, type StartSpec, type Stored } from '../../src/db/event-bodies';
import { Router } from '../../src/flows';
import { startOptions } from '../../src/intake/start-data';

/**
 * Stores a Stripe event in the inbox as a receiver does (its body, and what to start for it by the
 * kind's default routes), without the intake's work after the store: no start, no matching against
 * waits. `waitKeys`: the keys it carries for waits (src/intake/waits.ts); none, as a build without
 * the wait stored it. `start` and `skipped`: what to start for it, and why nothing, where a test
 * gives its own.
 */
export async function storeStripeEvent(
  db: Queryable,
  {
    source,
    id,
    type,
    raw,
    receivedAt = new Date(),
    waitKeys,
    start,
    skipped,
  }: { source: string; id: string; type: string; raw: Buffer; receivedAt?: Date; waitKeys?: string[]; start?: StartSpec; skipped?: Skipped },
): Promise<Stored> {
  const at = receivedAt.toISOString();
  const received = { source, provider: ProviderKind.STRIPE, id, type, occurredAt: at, receivedAt: at, payload: {} };
  const spec = start ?? startOptions(received, { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE) }, 'delivery', 'unused').spec;
  return storeBody(
    db,
    {
      source,
      eventId: id,
      workflowId: id,
      provider: ProviderKind.STRIPE,
      via: 'delivery',
      receivedAt: at,
      start: spec,
      leaseMs: 0,
      ...(waitKeys && { waitKeys }),
      ...(skipped && { skipped }),
    },
    { raw, contentType: 'application/json', signatureHeaders: {} },
  );
}
