import express from 'express';
import { listen } from '../../src/dev/http-server';

/** A Paddle event entity, as the events API lists it and a notification carries it. */
export interface PaddleEvent {
  event_id: string;
  event_type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/**
 * Paddle's events API (`GET /events`), as documented: Bearer API key, `order_by=id[ASC|DESC]`,
 * `per_page` (at most 200), the `after` cursor, `event_type` filter, and `meta.pagination` with an
 * absolute `next` link. Answers 403 to any other key. https://developer.paddle.com/api-reference/events/list-events
 */
export async function startPaddleStandIn(options: { apiKey: string }) {
  const events: PaddleEvent[] = [];
  const requests: Array<{ query: Record<string, unknown> }> = [];
  let failures: number[] = [];
  let nextOrigin: string | undefined;

  const app = express();
  app.get('/events', (req, res) => {
    requests.push({ query: { ...req.query } });
    const status = failures.shift();
    if (status !== undefined) {
      res.status(status).json({ error: { type: 'api_error', code: 'internal_error', detail: 'Injected failure from the stand-in.' } });
      return;
    }
    if (req.header('authorization') !== `Bearer ${options.apiKey}`) {
      res.status(403).json({ error: { type: 'request_error', code: 'forbidden', detail: 'You do not have permission to access this resource.' } });
      return;
    }
    const descending = req.query.order_by === 'id[DESC]';
    const perPage = Math.min(Number(req.query.per_page ?? 50), 200);
    const types = typeof req.query.event_type === 'string' ? req.query.event_type.split(',') : undefined;
    const after = typeof req.query.after === 'string' ? req.query.after : undefined;
    const ordered = events
      .filter((event) => !types || types.includes(event.event_type))
      .sort((a, b) => (a.event_id < b.event_id ? -1 : 1) * (descending ? -1 : 1))
      .filter((event) => !after || (descending ? event.event_id < after : event.event_id > after));
    const data = ordered.slice(0, perPage);
    const next = new URL('/events', nextOrigin ?? `${req.protocol}://${req.get('host')}`);
    for (const [key, value] of Object.entries(req.query)) if (key !== 'after') next.searchParams.set(key, String(value));
    if (data.length > 0) next.searchParams.set('after', data.at(-1)!.event_id);
    res.json({
      data,
      meta: {
        request_id: 'req_stand_in',
        pagination: { per_page: perPage, next: next.toString(), has_more: ordered.length > perPage, estimated_total: ordered.length },
      },
    });
  });

  const server = await listen(app);
  return {
    url: server.url,
    close: server.close,
    requests,
    /** Adds events to the log (Paddle IDs sort by time, so a later event has a larger ID). */
    addEvents: (...added: PaddleEvent[]) => events.push(...added),
    failNext: (...statuses: number[]) => {
      failures = [...failures, ...statuses];
    },
    /** Makes `next` links point at another origin, as a tampered or misconfigured proxy might. */
    pointNextAt: (origin: string | undefined) => {
      nextOrigin = origin;
    },
  };
}
