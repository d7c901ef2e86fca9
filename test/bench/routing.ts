import { performance } from 'node:perf_hooks';
import { ProviderKind } from '../../contracts';
import { Router, type RouteValue } from '../../src/flows';
import { startOptions } from '../../src/intake/start-data';
import { benchSize } from './settings';

/** What a route's filters may add to the intake's decision per event, per subscriber whose filter it evaluates (the target). */
export const ROUTE_MS_TARGET = 0.1;

/** Routes of the measured source: 1,000 patterns, each to three subscribers with filters. */
const ROUTES = 1_000;
const SUBSCRIBERS = 3;
const EVENTS = benchSize('ROUTING_EVENTS', 100_000, 2_000);

/**
 * The routing cost, CPU only: the intake's decision and start data (`startOptions`, what the
 * receiver or the inbox's starter runs per event) for events of a source with 1,000 routes of three
 * filtered subscribers each, against the same events of a source with no routes (one flow by type).
 * The added time per event, divided by the filters evaluated, is the cost per matching route.
 */
export function measureRouting() {
  const routes: Record<string, RouteValue> = {};
  for (let index = 0; index < ROUTES - 1; index++) {
    routes[`bench.type.${index}`] = [
      { flow: 'fulfilCheckout', if: `body.data.object.amount_total >= ${index}` },
      { flow: 'recordEvent', if: 'body.data.object.currency == "eur" && event.type.startsWith("bench.")' },
      { flow: 'notifyGitHub', if: 'body.data.object.metadata.order_id.startsWith("ord_") && size(body.data.object.lines) > 1' },
    ];
  }
  routes['bench.*'] = ['recordEvent', { flow: 'notifyGitHub', if: 'body.data.object.amount_total > 0' }, { flow: 'fulfilCheckout', if: 'true' }];
  const routed = { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE, routes) };
  const plain = { workflowIdPrefix: '', router: new Router(ProviderKind.STRIPE) };
  const events = Array.from({ length: 1_000 }, (_, index) => {
    const type = `bench.type.${(index * 7919) % (ROUTES - 1)}`;
    const payload = {
      id: `evt_${index}`,
      object: 'event',
      type,
      data: {
        object: { id: `cs_${index}`, amount_total: index * 10, currency: index % 2 ? 'eur' : 'usd', metadata: { order_id: `ord_${index}` }, lines: [1, 2, 3] },
      },
    };
    const at = new Date().toISOString();
    return { source: 'bench', provider: ProviderKind.STRIPE, id: payload.id, type, occurredAt: at, receivedAt: at, payload };
  });
  const run = (target: typeof plain) => {
    const started = performance.now();
    for (let index = 0; index < EVENTS; index++) startOptions(events[index % events.length]!, target, 'delivery', 'bench');
    return (performance.now() - started) / EVENTS;
  };
  // Warm both paths, then measure each twice, alternating, and keep each one's faster run.
  run(plain);
  run(routed);
  const plainMs = Math.min(run(plain), run(plain));
  const routedMs = Math.min(run(routed), run(routed));
  const perRouteMs = Math.max(0, routedMs - plainMs) / SUBSCRIBERS;
  return {
    routes: ROUTES,
    subscribersPerEvent: SUBSCRIBERS,
    events: EVENTS,
    plainMsPerEvent: round(plainMs),
    routedMsPerEvent: round(routedMs),
    addedMsPerEventPerRoute: round(perRouteMs),
    ratio: perRouteMs / ROUTE_MS_TARGET,
  };
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;
