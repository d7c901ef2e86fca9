import { setTimeout as delay } from 'node:timers/promises';
import { ProviderApiError } from '../core/errors';
import { readPaddleEvent } from '../providers/paddle';
import type { VerifiedEvent } from '../providers/types';
import type { ListedEvent } from './backfill';

/** Paddle Billing's API; its sandbox is https://sandbox-api.paddle.com. */
export const PADDLE_API_URL = 'https://api.paddle.com';

export interface PaddleListing {
  since: Date;
  until?: Date;
  types?: string[];
  /** Waits before the retries of a page that answered 429, 5xx or not at all. @default 1 s, 2 s, 4 s, 8 s, 16 s */
  retryDelaysMs?: number[];
}

interface EventsPage {
  data: Array<Record<string, unknown>>;
  meta?: { pagination?: { next?: string; has_more?: boolean } };
}

/**
 * Every event Paddle's events API lists in the window, newest first (`order_by=id[DESC]`, 200 a
 * page, following `meta.pagination.next`), read the way the receiver reads a notification. The API
 * filters by type but not by time, so the listing stops at the first event older than `since`.
 * A page that answers 429, a 5xx or nothing is retried with backoff; a 401 or 403 ends the listing
 * with what to fix, and a `next` link to another host is refused rather than sent the key.
 * https://developer.paddle.com/api-reference/events/list-events
 *
 * The API is called directly: `@paddle/paddle-node-sdk` turns events into camel-cased entities,
 * while a notification's body, and so every stored body and flow, has Paddle's own field names.
 */
export async function* paddleEvents(
  api: { apiKey: string; apiUrl?: string },
  listing: PaddleListing,
  source: string,
): AsyncGenerator<ListedEvent & VerifiedEvent> {
  const base = new URL(api.apiUrl ?? PADDLE_API_URL);
  const first = new URL('/events', base);
  first.searchParams.set('order_by', 'id[DESC]');
  first.searchParams.set('per_page', '200');
  if (listing.types?.length) first.searchParams.set('event_type', listing.types.join(','));
  let url: URL | undefined = first;
  while (url) {
    const page = await getPage(url, api.apiKey, listing.retryDelaysMs);
    for (const entity of page.data) {
      const verified = readPaddleEvent(entity, new Date(), source);
      const occurredAt = Date.parse(verified.occurredAt);
      if (occurredAt < listing.since.getTime()) return;
      if (listing.until && occurredAt > listing.until.getTime()) continue;
      yield { ...verified, read: async () => verified };
    }
    const next = page.meta?.pagination?.next;
    if (!page.meta?.pagination?.has_more || !next || page.data.length === 0) return;
    url = new URL(next, base);
    if (url.origin !== base.origin)
      throw new ProviderApiError(
        `Paddle's events API pointed the next page at ${url.origin}, not ${base.origin}; the listing stops rather than send the API key there.`,
      );
  }
}

async function getPage(url: URL, apiKey: string, delaysMs = [1000, 2000, 4000, 8000, 16000]): Promise<EventsPage> {
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined;
    try {
      response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    } catch {
      response = undefined;
    }
    if (response?.ok) return (await response.json()) as EventsPage;
    if (response?.status === 401 || response?.status === 403) {
      throw new ProviderApiError(`Paddle refused the API key (PADDLE_API_KEY): ${response.status}; it needs permission to read events.`);
    }
    const transient = response === undefined || response.status === 429 || response.status >= 500;
    if (!transient || attempt >= delaysMs.length) {
      throw new ProviderApiError(`Paddle's events API failed: ${response ? `${response.status} ${response.statusText}` : 'no answer'}.`);
    }
    await delay(delaysMs[attempt]!);
  }
}
