import type { Queryable } from '../db/database';
import { eachStoredEvent, type StoredEvent, type StoredEventWindow } from '../db/event-bodies';
import type { Router } from '../flows';
import { parseStoredBody } from '../providers/body';

/**
 * `durable-webhooks routes test`: what a candidate configuration's routes would do with the events
 * already stored, against what today's do, decided as the intake decides (the same router, on the
 * same verified bodies). It reads and starts nothing.
 */

/** What one event went to: its flows' names, `(ignored)`, `(filtered)`, or `<flow> (filter failed)`. */
export type Destinations = string[];

export interface RoutePreview {
  /** Events read, whose bodies are still stored. */
  events: number;
  /** Events whose bodies BODY_RETENTION purged (or an erasure removed): nothing to decide on. */
  purged: number;
  /** Per source and destination, the events today's routes and the candidate's send there. */
  routes: Array<{ source: string; to: string; today: number; candidate: number }>;
  /** Events the candidate sends elsewhere than today's routes do. */
  changed: number;
  /** The first of them. */
  examples: Array<{ source: string; eventId: string; type: string; today: Destinations; candidate: Destinations }>;
}

export async function previewRoutes(
  db: Queryable,
  routers: { today: ReadonlyMap<string, Router>; candidate: ReadonlyMap<string, Router> },
  window: StoredEventWindow,
  maxExamples = 10,
): Promise<RoutePreview> {
  const preview: RoutePreview = { events: 0, purged: 0, routes: [], changed: 0, examples: [] };
  const counts = new Map<string, { source: string; to: string; today: number; candidate: number }>();
  const count = (source: string, to: string, which: 'today' | 'candidate') => {
    const key = `${source}\u0000${to}`;
    const row = counts.get(key) ?? counts.set(key, { source, to, today: 0, candidate: 0 }).get(key)!;
    row[which]++;
  };
  for await (const event of eachStoredEvent(db, window)) {
    if (!event.body) {
      preview.purged++;
      continue;
    }
    preview.events++;
    const body = parseStoredBody(event, event.body);
    const today = destinations(routers.today.get(event.source), event, body);
    const candidate = destinations(routers.candidate.get(event.source) ?? routers.today.get(event.source), event, body);
    for (const to of today) count(event.source, to, 'today');
    for (const to of candidate) count(event.source, to, 'candidate');
    if (today.join('\u0000') !== candidate.join('\u0000')) {
      preview.changed++;
      if (preview.examples.length < maxExamples) preview.examples.push({ source: event.source, eventId: event.eventId, type: event.type, today, candidate });
    }
  }
  preview.routes = [...counts.values()].sort((a, b) => a.source.localeCompare(b.source) || a.to.localeCompare(b.to));
  return preview;
}

/** Where a router sends one event; a source no configuration has any more goes nowhere. */
function destinations(router: Router | undefined, event: StoredEvent, body: unknown): Destinations {
  if (!router) return ['(no such source)'];
  const decision = router.decide(event, body);
  if ('flow' in decision) return [decision.flow.name];
  if ('ignore' in decision) return ['(ignored)'];
  const flows = [...decision.subscribers.map((flow) => flow.name), ...decision.failures.map(({ flow }) => `${flow} (filter failed)`)];
  return flows.length > 0 ? flows : ['(filtered)'];
}
