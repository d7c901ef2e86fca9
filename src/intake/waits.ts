import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  copyValues,
  eventArrivedSignal,
  readPointer,
  type AwaitedEvent,
  type Flow,
  type RegisteredWait,
  type WaiterRegistration,
  type WaitState,
} from '../../contracts';
import type { Queryable } from '../db/database';
import {
  closeWaiter,
  markArrivalMatched,
  markSignalled,
  matchWaiter,
  openWaiters,
  registerWaiter,
  storedCandidates,
  unmatchedArrival,
  unmatchedArrivals,
  unsignalledWaiters,
  waiterOf,
  markWaitIndexed,
  setWaitKeys,
  storedOfType,
  waitIndexedAt,
  type Candidate,
  type WaiterState,
} from '../db/waiters';
import { millisecondsOf } from '../core/duration';
import { compileMatch, FilterError, type Match } from '../core/filters';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';
import { FLOWS } from '../flows';
import { parseStoredBody } from '../providers/body';

/**
 * Waits for another event (docs/flows.md#wait-for-another-event). Each stored event of an awaited
 * type carries the keys its waits compare (`event_bodies.wait_keys`, written with the body). A wait
 * is matched once, by whichever looks second: a new waiter looks through the events stored before it
 * (`registerWait`, the activity), and a new event through the waiters registered before it
 * (`EventWaits.arrived`, the intake). Both write their row before they look, so no pair is missed.
 * The match goes to the workflow as a signal, sent again by the sweepers until Temporal takes it.
 */

/** Each awaited event type, and the body fields (JSON pointers) that its waits' matches compare. */
const AWAITED: ReadonlyMap<string, readonly string[]> = awaitedFields(FLOWS);

function awaitedFields(flows: readonly Flow[]): ReadonlyMap<string, readonly string[]> {
  const awaited = new Map<string, Set<string>>();
  for (const wait of flows.flatMap((flow) => flow.waits)) {
    const fields = awaited.get(wait.type) ?? awaited.set(wait.type, new Set()).get(wait.type)!;
    fields.add(compileMatch(wait.match).key.pointer);
  }
  return new Map([...awaited].map(([type, fields]) => [type, [...fields]]));
}

/**
 * What a wait finds a stored event by: `<pointer>=<JSON value>` for each field a wait on its type
 * compares (`/data/object/payment_intent="pi_1"`); undefined when no wait is on its type, or the
 * body has none of the fields as a string, number or bool.
 */
export function waitKeysOf(type: string, body: unknown): string[] | undefined {
  const fields = AWAITED.get(type);
  if (!fields) return undefined;
  const keys = fields.flatMap((pointer) => {
    const value = readPointer(body, pointer);
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? [waitKey(pointer, value)] : [];
  });
  return keys.length > 0 ? keys : undefined;
}

/** The key of one compared field's value, as the body store and the waiters table keep it. */
export function waitKey(pointer: string, value: unknown): string {
  return `${pointer}=${JSON.stringify(value)}`;
}

/** How far before the last pass's start a pass reads again: receipt times are set a moment before the row is written. */
const INDEX_OVERLAP_MS = 10 * 60_000;

/**
 * Gives stored events of awaited types the keys they would have had, where a build that did not
 * declare the wait stored them: the first pass for a type and set of fields reads every stored
 * event of the type (those from before this build declared a wait on it, or on another field of
 * it); later passes read from a little before the last one began (those a receiver still on an older
 * build stored during a rolling deploy). An event whose keys changed is matched again against the
 * open waits by a sweeper. The sweepers run it at start and hourly; two at once do the same harmless
 * work, and `stopping` ends it between pages (the next pass goes on). The number of events whose keys changed.
 */
export async function indexStoredEvents(
  db: Queryable,
  { batch = 500, stopping = () => false }: { batch?: number; stopping?: () => boolean } = {},
): Promise<number> {
  let changed = 0;
  for (const [type, pointers] of AWAITED) {
    const fields = [...pointers].sort().join(' ');
    const { rows } = await db.query<{ now: Date }>('SELECT now() AS now');
    const began = rows[0]!.now;
    const last = await waitIndexedAt(db, type, fields);
    let after: Pick<Candidate, 'receivedAt' | 'source' | 'eventId'> | null = last && {
      receivedAt: new Date(last.getTime() - INDEX_OVERLAP_MS),
      source: '',
      eventId: '',
    };
    for (;;) {
      const page = await storedOfType(db, type, after, batch);
      for (const event of page) {
        const body = bodyOf(event);
        const keys = body === undefined ? null : (waitKeysOf(type, body) ?? null);
        if (await setWaitKeys(db, event.source, event.eventId, keys)) changed++;
      }
      if (stopping()) return changed;
      if (page.length < batch) break;
      after = page.at(-1)!;
    }
    await markWaitIndexed(db, type, fields, began);
  }
  return changed;
}

/** A stored event's parsed body; undefined when it is purged, erased or cannot be read (it then matches no wait, now or at any later pass). */
function bodyOf(candidate: Candidate): unknown {
  if (!candidate.body) return undefined;
  try {
    return parseStoredBody(candidate, candidate.body);
  } catch {
    return undefined;
  }
}

/** Each wait's match, compiled once per expression. */
const compiled = new Map<string, Match>();
function matchOf(expression: string): Match {
  let match = compiled.get(expression);
  if (!match) compiled.set(expression, (match = compileMatch(expression)));
  return match;
}

/** The event, if it matches the waiter (given its parsed body): its fields as the wait copies them. A match that cannot decide for this body does not match. */
function matching(waiter: Pick<WaiterState, 'match' | 'fields' | 'waiting'>, candidate: Candidate, body: unknown): AwaitedEvent | undefined {
  try {
    const event = { type: candidate.type, source: candidate.source, provider: candidate.provider };
    if (!matchOf(waiter.match).matches({ body, event, waiting: waiter.waiting })) return undefined;
  } catch (error) {
    if (error instanceof FilterError) return undefined;
    throw error;
  }
  return { eventId: candidate.eventId, type: candidate.type, receivedAt: candidate.receivedAt.toISOString(), fields: copyValues(waiter.fields, body) };
}

/**
 * The activity's half: records the wait, then gives it the first stored event that matches (it
 * arrived before the wait began), unless one arriving meanwhile took it first. Run again (a retry, a
 * reset), it answers what the first run recorded.
 */
export async function registerWait(db: Queryable, registration: WaiterRegistration): Promise<RegisteredWait> {
  const waiter = await registered(db, registration);
  const { until } = waiter;
  return { ...(await stateAfterLooking(db, waiter)), until: until.toISOString(), remainingMs: Math.max(0, until.getTime() - Date.now()) };
}

async function registered(db: Queryable, { workflowId, source, wait, waiting }: WaiterRegistration): Promise<WaiterState> {
  const { key } = matchOf(wait.match);
  const value = waiting[key.waiting];
  if (value === undefined || value === null)
    throw ApplicationFailure.nonRetryable(
      `The wait ${wait.name} of ${wait.flow} compares ${key.pointer} to waiting.${key.waiting}, which the flow did not give.`,
      'WaitWithoutKey',
    );
  return registerWaiter(db, {
    workflowId,
    wait: wait.name,
    flow: wait.flow,
    source,
    type: wait.type,
    waitKey: waitKey(key.pointer, value),
    match: wait.match,
    fields: { ...wait.fields },
    waiting,
    until: new Date(Date.now() + millisecondsOf(wait.timeout)),
  });
}

/** The first stored event that matches, given to the waiter unless one arriving took it first; else where the waiter stands. */
async function stateAfterLooking(db: Queryable, waiter: WaiterState): Promise<WaitState> {
  const { workflowId, source } = waiter;
  if (waiter.status === 'waiting') {
    for (const candidate of await storedCandidates(db, source, waiter.type, waiter.waitKey)) {
      const body = bodyOf(candidate);
      const event = body === undefined ? undefined : matching(waiter, candidate, body);
      if (!event) continue;
      // The activity's result carries it: no signal to send.
      if (await matchWaiter(db, waiter, event, { signalled: true })) return { matched: event };
      break;
    }
  }
  // Matched by an event that arrived meanwhile, or by the first run of this registration.
  return stateOf(waiter.status === 'waiting' ? ((await waiterOf(db, workflowId, waiter.wait)) ?? waiter) : waiter);
}

function stateOf(waiter: WaiterState): WaitState {
  if (waiter.status === 'matched' && waiter.matched) return { matched: waiter.matched };
  return waiter.status === 'timed_out' ? { timedOut: true } : { waiting: true };
}

/** The activity's half when the time is up: stops the waiter, unless an event matched it first (then that event). */
export async function endWait(db: Queryable, workflowId: string, wait: string): Promise<WaitState> {
  const waiter = await closeWaiter(db, workflowId, wait);
  return waiter ? stateOf(waiter) : { timedOut: true };
}

/** How long the process that stored an event, or matched a waiter, has before a sweeper does it instead. */
export const WAIT_LEASE_MS = 10_000;

/**
 * The intake's half: matches each new event of an awaited type against the waiters registered
 * before it, and signals each waiter it matched. Whatever a crash or Temporal's absence leaves
 * undone (an event not matched yet, a signal not taken) the sweepers do (`sweep`).
 */
export class EventWaits {
  constructor(
    private readonly db: Queryable,
    private readonly client: Client,
    private readonly logger: Logger,
  ) {}

  /** Matches one stored event against the open waiters, then signals those it matched. */
  async arrived(source: string, eventId: string): Promise<void> {
    const candidate = await unmatchedArrival(this.db, source, eventId);
    if (!candidate) return;
    const body = bodyOf(candidate);
    const waiters = body === undefined ? [] : await openWaiters(this.db, source, candidate.type, candidate.waitKeys ?? []);
    const matched: Array<{ waiter: WaiterState; event: AwaitedEvent }> = [];
    for (const waiter of waiters) {
      const event = matching(waiter, candidate, body);
      if (event && (await matchWaiter(this.db, waiter, event, { signalled: false }))) matched.push({ waiter, event });
    }
    await markArrivalMatched(this.db, source, eventId);
    for (const { waiter, event } of matched) await this.signal(waiter, event);
  }

  /** Best effort after a store: what fails here, a sweeper does after `WAIT_LEASE_MS`. */
  arrivedLater(source: string, eventId: string): void {
    this.arrived(source, eventId).catch((error: unknown) =>
      this.logger.warn({ source, eventId, error: errorLine(error) }, 'waits: matching an event failed; a sweeper matches it'),
    );
  }

  /**
   * One sweeper pass: events stored but not matched, then matches whose signal Temporal has not
   * taken, each at least `leaseMs` old (the storing or matching process tries first): the events
   * matched, and the signals Temporal took.
   */
  async sweep(batch = 100, leaseMs = WAIT_LEASE_MS): Promise<{ arrivals: number; signals: number }> {
    const arrivals = await unmatchedArrivals(this.db, leaseMs, batch);
    // One event that cannot be matched now (its body unreadable) holds up none of the others.
    for (const { source, eventId } of arrivals)
      await this.arrived(source, eventId).catch((error: unknown) =>
        this.logger.warn({ source, eventId, error: errorLine(error) }, 'waits: matching an event failed; the next pass tries again'),
      );
    let signals = 0;
    for (const waiter of await unsignalledWaiters(this.db, leaseMs, batch)) if (await this.signal(waiter, waiter.matched!)) signals++;
    return { arrivals: arrivals.length, signals };
  }

  /** Sends the match (a workflow that is gone needs it no more): true when Temporal took it; else it is left for a sweeper. */
  private async signal(waiter: WaiterState, event: AwaitedEvent): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(waiter.workflowId).signal(eventArrivedSignal, { ...event, wait: waiter.wait });
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) {
        this.logger.warn(
          { workflowId: waiter.workflowId, wait: waiter.wait, error: errorLine(error) },
          'waits: Temporal did not take the match; a sweeper sends it again',
        );
        return false;
      }
    }
    await markSignalled(this.db, waiter.workflowId, waiter.wait);
    return true;
  }
}
