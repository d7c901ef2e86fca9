import { setTimeout as delay } from 'node:timers/promises';
import Stripe from 'stripe';
import { readStripeEvent } from '../providers/stripe';
import type { VerifiedEvent } from '../providers/types';
import { ProviderApiError } from '../core/errors';
import type { ListedEvent } from './backfill';

/** Stripe keeps events for 30 days; the Events API lists nothing older. */
export const STRIPE_EVENT_RETENTION_DAYS = 30;

export interface StripeListing {
  since: Date;
  until?: Date;
  types?: string[];
  /** Waits before the retries of a page that answered 429, 5xx or not at all. @default 1 s, 2 s, 4 s, 8 s, 16 s */
  retryDelaysMs?: number[];
}

/**
 * Every event Stripe's Events API lists in the window (newest first, 100 a page, `starting_after`
 * cursor), read the way the receiver reads a delivery. A page that answers 429, a 5xx or nothing is
 * retried with backoff from the same cursor; a 401 or 403 ends the listing with what to fix.
 * https://docs.stripe.com/api/events/list
 */
export async function* stripeEvents(stripe: Stripe, listing: StripeListing, source: string): AsyncGenerator<ListedEvent & VerifiedEvent> {
  const created = { gte: Math.floor(listing.since.getTime() / 1000), ...(listing.until && { lte: Math.floor(listing.until.getTime() / 1000) }) };
  let startingAfter: string | undefined;
  for (;;) {
    const page = await withRetries(
      () =>
        stripe.events.list({
          created,
          limit: 100,
          ...(listing.types?.length && { types: listing.types }),
          ...(startingAfter && { starting_after: startingAfter }),
        }),
      listing.retryDelaysMs,
    );
    for (const event of page.data) {
      const verified = readStripeEvent(event, source);
      yield { ...verified, read: async () => verified };
    }
    if (!page.has_more || page.data.length === 0) return;
    startingAfter = page.data[page.data.length - 1]!.id;
  }
}

async function withRetries<T>(call: () => Promise<T>, delaysMs = [1000, 2000, 4000, 8000, 16000]): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (error instanceof Stripe.errors.StripeAuthenticationError || error instanceof Stripe.errors.StripePermissionError) {
        throw new ProviderApiError(`Stripe refused the API key (STRIPE_SECRET_KEY): ${error.message}`);
      }
      const transient =
        error instanceof Stripe.errors.StripeRateLimitError ||
        error instanceof Stripe.errors.StripeConnectionError ||
        (error instanceof Stripe.errors.StripeError && (error.statusCode ?? 0) >= 500);
      if (!transient || attempt >= delaysMs.length)
        throw error instanceof Stripe.errors.StripeError ? new ProviderApiError(`Stripe's Events API failed: ${error.message}`) : error;
      await delay(delaysMs[attempt]!);
    }
  }
}
