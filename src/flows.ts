import * as workflows from '../workflows';
import { coalesceTimes, isFlow, type CoalesceTimes, type CoalesceWindow, type EventFlow, type Flow, type ProviderKind } from '../contracts';
import { millisecondsOf } from './core/duration';
import { ConfigError } from './core/errors';
import { compileFilter, compileMatch, FilterError, type Filter, type FilterInput } from './core/filters';

/** The internal workflows' declarations, for the code that starts them. */
export {
  backfillFlow,
  bulkActionFlow,
  buildCheckFlow,
  deliverMessageFlow,
  keyEntityFlow,
  publishMessageFlow,
  reconcileFlow,
  replayRouteFlow,
  subscriptionEntityFlow,
} from '../workflows';

/** Every flow the worker runs: the declarations `workflows/index.ts` exports beside their workflows. */
export const FLOWS: readonly Flow[] = checkedWaits(checkedKeys(Object.values(workflows).filter(isFlow)));

/**
 * A coalescing key's gathering times in milliseconds, as its entity keeps them; an Error for times
 * that are no durations, or a quiet time longer than the ceiling (a burst would never go quiet in time).
 */
export function coalesceWindow(times: CoalesceTimes): CoalesceWindow {
  const window = { quiet: millisecondsOf(times.quiet), ceiling: millisecondsOf(times.ceiling) };
  if (!(window.quiet > 0 && window.ceiling >= window.quiet))
    throw new Error(`A coalescing key needs a quiet time and a ceiling no shorter than it ('5s', '1m'), not "${times.quiet}" and "${times.ceiling}".`);
  return window;
}

/** The flows, once every coalescing key's times read: a mistake in `workflows/` stops the process that loads it, not the first event of the key. */
export function checkedKeys(flows: readonly Flow[]): readonly Flow[] {
  for (const flow of flows) {
    const times = flow.key && coalesceTimes(flow.key);
    if (times) {
      try {
        coalesceWindow(times);
      } catch (error) {
        throw new Error(`${flow.name}: ${(error as Error).message}`, { cause: error });
      }
    }
  }
  return flows;
}

/** The flows, once every wait's match compiles and its timeout reads: a mistake in `workflows/` stops the process that loads it. */
export function checkedWaits(flows: readonly Flow[]): readonly Flow[] {
  for (const flow of flows) {
    for (const wait of flow.waits) {
      try {
        compileMatch(wait.match);
      } catch (error) {
        throw new Error(`${flow.name}: the wait ${wait.name}'s match ${(error as Error).message}.`, { cause: error });
      }
      if (!(millisecondsOf(wait.timeout) > 0))
        throw new Error(`${flow.name}: the wait ${wait.name}'s timeout "${wait.timeout}" is no duration ('30 days', '1h').`);
    }
  }
  return flows;
}

/** The flow that records every event type nothing routes: completed as ignored, still visible. */
export const DEFAULT_FLOW = workflows.recordEventFlow;

/** The event's own workflow when its route has subscribers: it starts each flow the filters chose. */
export const ROUTE_FLOW = workflows.routeEventFlow;

const byName: ReadonlyMap<string, Flow> = new Map(FLOWS.map((flow) => [flow.name, flow]));

/** The flow of this workflow type, if it is one of ours. */
export function flowNamed(name: string): Flow | undefined {
  return byName.get(name);
}

/**
 * A source's `routes`: an event type, or a prefix ending in `*` (`customer.*`, or `*` for all), to a
 * flow's name, or to `ignore`: verified, deduplicated and stored, answered 2xx, and no workflow
 * started; or to subscribers (docs/flows.md#routes): one `{ flow, if }` or a list of flows and
 * `{ flow, if }`, each run as a workflow of its own when its filter (a CEL expression) holds.
 */
export type Routes = Readonly<Record<string, RouteValue>>;

export type RouteValue = string | Subscription | ReadonlyArray<string | Subscription>;

/** One flow of a route with subscribers, and the CEL filter on the verified event that decides whether it runs; none: always. */
export interface Subscription {
  flow: string;
  if?: string;
}

/** A subscriber as the router keeps it: its flow and its compiled filter. */
interface Subscriber {
  flow: EventFlow;
  filter: Filter | undefined;
}

/** What a route decided for one event. */
export type RouteDecision =
  | { flow: EventFlow }
  | { ignore: true }
  /** The flows whose filters held (none, and no failure: `filtered`), those whose filters did not, and the filters that threw or yielded no bool. */
  | { subscribers: EventFlow[]; filtered: string[]; failures: Array<{ flow: string; error: string }> };

/** The route that starts nothing. */
export const IGNORE = 'ignore';

// Maps, not object literals: an event type is sender-chosen text, and "constructor" or "__proto__"
// must find nothing rather than a property every object inherits.
const DEFAULTS: ReadonlyMap<ProviderKind, ReadonlyMap<string, EventFlow>> = defaultRoutes(FLOWS);

/** Each provider kind's event types and the flow that handles each by default; two flows claiming one type is a mistake in `workflows/`. */
export function defaultRoutes(flows: readonly Flow[]): ReadonlyMap<ProviderKind, ReadonlyMap<string, EventFlow>> {
  const routes = new Map<ProviderKind, Map<string, EventFlow>>();
  for (const flow of flows) {
    for (const [kind, types] of Object.entries(flow.handles) as [ProviderKind, readonly string[]][]) {
      const ofKind = routes.get(kind) ?? routes.set(kind, new Map()).get(kind)!;
      for (const type of types) {
        const other = ofKind.get(type);
        if (other) throw new Error(`Both ${other.name} and ${flow.name} declare that they handle ${kind} "${type}".`);
        ofKind.set(type, flow as EventFlow);
      }
    }
  }
  return routes;
}

/**
 * Which flow each of one source's event types starts: the source's own routes first (an exact
 * type, then the longest matching `prefix*`), then the kind's defaults, then `recordEvent`.
 */
export class Router {
  private readonly exact = new Map<string, Route>();
  /** Prefixes, longest first. */
  private readonly prefixes: [string, Route][] = [];

  /**
   * @throws ConfigError naming the route, when it names no event flow, its pattern has a `*`
   * anywhere but at the end, or a filter does not compile within its bounds (src/core/filters.ts).
   */
  constructor(
    readonly kind: ProviderKind,
    readonly routes: Routes = {},
    where = 'routes',
  ) {
    for (const [pattern, value] of Object.entries(routes)) {
      const star = pattern.indexOf('*');
      if (pattern === '' || (star !== -1 && star !== pattern.length - 1)) {
        throw new ConfigError(`${where}: "${pattern}" must be an event type, or a prefix ending in "*" such as "customer.*".`);
      }
      const route = readRoute(value, `${where}: "${pattern}"`);
      if (star === -1) this.exact.set(pattern, route);
      else this.prefixes.push([pattern.slice(0, -1), route]);
    }
    this.prefixes.sort(([a], [b]) => b.length - a.length);
    const all = [...(DEFAULTS.get(this.kind)?.values() ?? []), ...this.exact.values(), ...this.prefixes.map(([, route]) => route), DEFAULT_FLOW];
    // A subscriber decides from the body when its flow does and its filter reads the body alone.
    this.decidesFromBody = all.every((route) =>
      Array.isArray(route)
        ? (route as readonly Subscriber[]).every(({ flow, filter }) => flow.decidesFromBody && !filter?.readsEvent)
        : route === IGNORE || (route as EventFlow).decidesFromBody,
    );
  }

  /**
   * True when every flow this source can start decides from the signed body, never from the type
   * (`FlowDeclaration.decidesFromBody`): its kind's defaults, its routes and the fallback. Only then
   * may the same signed bytes come under several unsigned types (the replay guard keys on the type
   * too); one flow chosen by the type keeps the whole source on the strict guard. Read once, when
   * the routes are, not per event.
   */
  readonly decidesFromBody: boolean;

  /**
   * Where one event goes: its type's one flow, `ignore`, or the subscribers whose filters hold for
   * its verified body. A filter that throws for this event is that subscriber's failure, never the others'.
   */
  decide(event: Omit<FilterInput['event'], 'tenant'>, body: unknown): RouteDecision {
    const route = this.route(event.type);
    if (route === IGNORE) return { ignore: true };
    if (!Array.isArray(route)) return { flow: route as EventFlow };
    const subscribers: EventFlow[] = [];
    const filtered: string[] = [];
    const failures: Array<{ flow: string; error: string }> = [];
    for (const { flow, filter } of route as readonly Subscriber[]) {
      try {
        // The tenant is the subscriber's own: its flow's tenant field, read from the signed body, or null.
        if (
          !filter ||
          filter.matches({ body, event: { type: event.type, source: event.source, provider: event.provider, tenant: flow.readTenant(body) ?? null } })
        )
          subscribers.push(flow);
        else filtered.push(flow.name);
      } catch (error) {
        if (!(error instanceof FilterError)) throw error;
        failures.push({ flow: flow.name, error: `the filter ${JSON.stringify(filter!.expression)} ${error.message}` });
      }
    }
    return { subscribers, filtered, failures };
  }

  /** The flow that handles this event type; `recordEvent` for one the routes ignore (nothing starts it: `ignores`). */
  flowFor(type: string): EventFlow {
    const route = this.route(type);
    return route === IGNORE ? DEFAULT_FLOW : Array.isArray(route) ? ROUTE_FLOW : (route as EventFlow);
  }

  /** True when a route says `ignore` for this type: stored and answered, no workflow started. */
  ignores(type: string): boolean {
    return this.route(type) === IGNORE;
  }

  /** The patterns routed to `ignore`. */
  ignored(): string[] {
    return Object.entries(this.routes)
      .filter(([, name]) => name === IGNORE)
      .map(([pattern]) => pattern);
  }

  private route(type: string): Route {
    return this.exact.get(type) ?? this.prefixes.find(([prefix]) => type.startsWith(prefix))?.[1] ?? DEFAULTS.get(this.kind)?.get(type) ?? DEFAULT_FLOW;
  }

  /**
   * What is routed to `flow` at this source: its default event types that no route takes elsewhere,
   * and the routes that name it; `*` when it is the fallback for everything else.
   */
  routedTo(flow: Flow): string[] {
    const routed = [...(DEFAULTS.get(this.kind) ?? new Map<string, EventFlow>()).keys()].filter((type) => this.route(type) === flow);
    for (const [pattern, value] of Object.entries(this.routes)) {
      if (value === flow.name && !routed.includes(pattern)) routed.push(pattern);
      for (const subscription of typeof value === 'string' ? [] : [value].flat()) {
        const { flow: name, if: filter } = typeof subscription === 'string' ? { flow: subscription } : subscription;
        if (name === flow.name) routed.push(filter === undefined ? `${pattern} (with others)` : `${pattern} if ${filter}`);
      }
    }
    if (flow === DEFAULT_FLOW && !this.prefixes.some(([prefix]) => prefix === '')) routed.push('* (everything else)');
    return routed;
  }
}

/** A source's routes as operators read them: each pattern, and its flows with their filters (`ignore` is a flow of none). */
export function describeRoutes(routes: Routes): Array<{ pattern: string; flows: Array<{ flow: string; filter?: string }> }> {
  return Object.entries(routes).map(([pattern, value]) => ({
    pattern,
    flows: [value].flat().map((each) => (typeof each === 'string' ? { flow: each } : { flow: each.flow, ...(each.if !== undefined && { filter: each.if }) })),
  }));
}

/** A route as the router keeps it: one flow, `ignore`, or subscribers with their compiled filters. */
type Route = EventFlow | typeof IGNORE | readonly Subscriber[];

/** One route's value read and checked: a flow's name or `ignore`, or subscribers. */
function readRoute(value: RouteValue, where: string): Route {
  if (typeof value === 'string') return value === IGNORE ? IGNORE : eventFlowNamed(value, where);
  const subscriptions = [value].flat() as Array<string | Subscription>;
  if (subscriptions.length === 0) throw new ConfigError(`${where} lists no flow; name one or more, or say ${IGNORE}.`);
  const subscribers: Subscriber[] = [];
  for (const subscription of subscriptions) {
    const { flow: name, if: expression } = typeof subscription === 'string' ? { flow: subscription } : subscription;
    const flow = eventFlowNamed(name, where);
    if (subscribers.some((each) => each.flow === flow)) throw new ConfigError(`${where} names ${name} twice; a flow runs once for an event.`);
    let filter: Filter | undefined;
    try {
      filter = expression === undefined ? undefined : compileFilter(expression);
    } catch (error) {
      throw new ConfigError(`${where} → ${name}: the filter ${(error as Error).message}.`);
    }
    subscribers.push({ flow, filter });
  }
  return subscribers;
}

function eventFlowNamed(name: unknown, where: string): EventFlow {
  const flow = typeof name === 'string' ? flowNamed(name) : undefined;
  if (!flow || flow.internal) {
    const names = FLOWS.filter((each) => !each.internal).map((each) => each.name);
    throw new ConfigError(`${where} names the flow "${String(name)}", which does not exist; use one of ${names.join(', ')}, or ${IGNORE}.`);
  }
  return flow as EventFlow;
}
