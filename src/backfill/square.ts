import { ProviderApiError } from '../core/errors';
import { readSquareEvent } from '../providers/square';
import type { VerifiedEvent } from '../providers/types';
import type { ListedEvent } from './backfill';

/** Square's Events API searches the last 28 days. */
export const SQUARE_EVENT_RETENTION_DAYS = 28;

export interface SquareListing {
  since: Date;
  until?: Date;
  types?: string[];
  /** Retries of a page that answered 408, 429, 5xx or nothing, with the SDK's own backoff. @default 5 */
  maxRetries?: number;
}

/**
 * Every event Square's Events API (`SearchEvents`, through the `square` SDK's `events.searchEvents`)
 * has in the window, newest first, 100 a page with its cursor, read the way the receiver reads a
 * notification: each event is turned back into Square's own JSON by the SDK's serializer, which is
 * what a notification's body holds. Square records events only while they are enabled
 * (`PUT /v2/events/enable`, once per account). https://developer.squareup.com/reference/square/events-api/search-events
 */
export async function* squareEvents(
  api: { token: string; apiUrl?: string },
  listing: SquareListing,
  source: string,
): AsyncGenerator<ListedEvent & VerifiedEvent> {
  // Loaded here: the SDK's entry point takes two seconds, which only a Square backfill pays.
  const { SquareClient, SquareError, serialization } = await import('square');
  const client = new SquareClient({ token: api.token, ...(api.apiUrl && { baseUrl: api.apiUrl }), timeoutInSeconds: 10, maxRetries: listing.maxRetries ?? 5 });
  const createdAt = { startAt: listing.since.toISOString(), ...(listing.until && { endAt: listing.until.toISOString() }) };
  let cursor: string | undefined;
  do {
    let page;
    try {
      page = await client.events.searchEvents({
        limit: 100,
        ...(cursor && { cursor }),
        query: { filter: { createdAt, ...(listing.types?.length && { eventTypes: listing.types }) }, sort: { field: 'DEFAULT', order: 'DESC' } },
      });
    } catch (error) {
      if (!(error instanceof SquareError)) throw error;
      const detail = error.errors[0]?.detail ?? error.message;
      if (error.statusCode === 401 || error.statusCode === 403) throw new ProviderApiError(`Square refused the access token (SQUARE_ACCESS_TOKEN): ${detail}`);
      throw new ProviderApiError(`Square's Events API failed: ${detail}`);
    }
    for (const event of page.events ?? []) {
      const verified = readSquareEvent(serialization.Event.jsonOrThrow(event) as Record<string, unknown>, new Date(), source);
      yield { ...verified, read: async () => verified };
    }
    cursor = page.cursor || undefined;
  } while (cursor);
}
