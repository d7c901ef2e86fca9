import express from 'express';
import { listen } from '../../src/dev/http-server';

/** A Square event, as the Events API returns it and a notification carries it. */
export interface SquareEvent {
  merchant_id: string;
  type: string;
  event_id: string;
  created_at: string;
  data: { type: string; id: string; object?: Record<string, unknown> };
}

/**
 * Square's Events API (`POST /v2/events`, SearchEvents), as documented: Bearer access token,
 * `query.filter.event_types` and `created_at.start_at`/`end_at`, `query.sort.order`, `limit` (at
 * most 100) and an opaque `cursor`; errors as `{"errors":[{category, code, detail}]}`.
 * https://developer.squareup.com/reference/square/events-api/search-events
 */
export async function startSquareStandIn(options: { token: string }) {
  const events: SquareEvent[] = [];
  const requests: Array<{ body: Record<string, unknown>; squareVersion?: string }> = [];
  let failures: number[] = [];

  const app = express();
  app.use(express.json());
  app.post('/v2/events', (req, res) => {
    const body = req.body as {
      cursor?: string;
      limit?: number;
      query?: { filter?: { event_types?: string[]; created_at?: { start_at?: string; end_at?: string } }; sort?: { order?: string } };
    };
    requests.push({ body: req.body as Record<string, unknown>, squareVersion: req.header('square-version') });
    const status = failures.shift();
    if (status !== undefined) {
      res.status(status).json({ errors: [{ category: 'API_ERROR', code: 'INTERNAL_SERVER_ERROR', detail: 'Injected failure from the stand-in.' }] });
      return;
    }
    if (req.header('authorization') !== `Bearer ${options.token}`) {
      res.status(401).json({ errors: [{ category: 'AUTHENTICATION_ERROR', code: 'UNAUTHORIZED', detail: 'This request could not be authorized.' }] });
      return;
    }
    const { event_types: types, created_at: window } = body.query?.filter ?? {};
    const descending = body.query?.sort?.order !== 'ASC';
    const matching = events
      .filter((event) => !types || types.includes(event.type))
      .filter((event) => (!window?.start_at || event.created_at >= window.start_at) && (!window?.end_at || event.created_at <= window.end_at))
      .sort((a, b) => (a.created_at < b.created_at ? -1 : 1) * (descending ? -1 : 1));
    const offset = body.cursor ? Number(Buffer.from(body.cursor, 'base64url').toString()) : 0;
    const limit = Math.min(body.limit ?? 100, 100);
    const page = matching.slice(offset, offset + limit);
    const more = offset + limit < matching.length;
    res.json({
      events: page,
      metadata: page.map((event) => ({ event_id: event.event_id, api_version: '2026-09-16' })),
      ...(more && { cursor: Buffer.from(String(offset + limit)).toString('base64url') }),
    });
  });

  const server = await listen(app);
  return {
    url: server.url,
    close: server.close,
    requests,
    addEvents: (...added: SquareEvent[]) => events.push(...added),
    failNext: (...statuses: number[]) => {
      failures = [...failures, ...statuses];
    },
  };
}
