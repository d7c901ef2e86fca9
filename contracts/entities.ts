import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { StringValue } from '@temporalio/common';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';

/**
 * Entities: a keyed flow's events about one business object (a Shopify order, a Stripe object)
 * take turns, one at a time, in the order of the version their signed bodies carry. Each event keeps
 * its own workflow (its ID is the event ID). An event whose key is free holds the key itself and
 * runs at once; while the key is held, events wait in the key's entity workflow, which gives them
 * their turns once the key is handed to it, and hears how each ended (docs/entities.md).
 */

/**
 * How a key's events are applied. `serial`: every event, one at a time, the oldest version waiting
 * first. `latest`: one at a time, the newest waiting first; an event whose version is not newer than
 * the last one applied is recorded and skipped (`superseded`), as is every older one still waiting.
 * `coalesce`: as `latest`, but a burst gathers first, until the key has been quiet for `quiet` or
 * `ceiling` has passed since the burst began, so a burst runs once, with its newest version.
 */
export type EntityOrder = 'serial' | 'latest' | 'coalesce';

/** What `defineFlow` is given as `key`: JSON pointers into the signed body, and the order. */
export type EntityDeclaration = {
  /** The business object's ID: the Shopify order's `/id`, the Stripe object's `/data/object/id`. */
  key: string;
  /**
   * The object's version, compared in turn: `['/updated_at']`, or Stripe's `['/created']`. A number
   * compares as a number, a date-time text as its instant, other text as text; the event ID breaks
   * ties, so no two events of a key are ever equal. An event without a version is the newest.
   */
  version: readonly string[];
} & (
  | { order: 'serial' | 'latest' }
  | {
      order: 'coalesce';
      /** How long the key must be quiet (no new event) before its burst runs: `'5 seconds'`. */
      quiet: StringValue;
      /** The longest a burst gathers, from its first event, however busy the key stays: `'1 minute'`. */
      ceiling: StringValue;
    }
);

/** A coalescing key's gathering times, as declared (`askTurn` gives the entity their milliseconds). */
export type CoalesceTimes<T = StringValue> = { quiet: T; ceiling: T };

/** A coalescing key's gathering times, in milliseconds, as its entity keeps them. */
export type CoalesceWindow = CoalesceTimes<number>;

/** The gathering times of a declaration that coalesces; null for the other orders. */
export const coalesceTimes = (declaration: EntityDeclaration): CoalesceTimes | null =>
  declaration.order === 'coalesce' ? { quiet: declaration.quiet, ceiling: declaration.ceiling } : null;

/** One part of a version: what the pointer found, if it is a number or short text. */
export type VersionPart = string | number | null;
export type Version = readonly VersionPart[];

/** The copied fields that carry an event's key and version to its workflow (the receiver reads them from the signed body). */
const ENTITY_FIELD = '@entity.';
export const ENTITY_KEY_FIELD = `${ENTITY_FIELD}key`;
export const entityVersionField = (index: number) => `${ENTITY_FIELD}version.${index}`;
/** True for the copied fields a flow's `key` adds, which are no field of its own. */
export const isEntityField = (name: string) => name.startsWith(ENTITY_FIELD);

/** An event asking for its key's turn. */
export interface TurnRequest {
  eventId: string;
  /** The event's workflow ID (the event ID behind its source's prefix), where the turn is sent. */
  workflowId: string;
  type: string;
  version: Version;
  /** When the receiver took the event (ISO 8601), for the key's lag; absent from requests made before it was sent. */
  receivedAt?: string;
}

/** The entity's answer: run now, or end as superseded by a newer version already applied or waiting. */
export interface Turn {
  go: boolean;
  /** The event applied before this one, if any: what the event builds on, or what superseded it. */
  after: Applied | null;
}

/** An applied event: its ID and version. */
export interface Applied {
  eventId: string;
  version: Version;
}

/** What an entity answers an event's request within it: its turn, or null when the event must wait for a `turn` signal. */
export type TurnAnswer = Turn | null;

/** How an event that had its turn ended: applied, or failed (its key waits for an operator). */
export interface TurnDone {
  eventId: string;
  failure: string | null;
}

/** What an operator may do with a key waiting on a failed event: go on without it, or run it again. */
export const ENTITY_ACTIONS = ['skip', 'retry'] as const;

/** An operator's decision for a key waiting on a failed event. */
export interface EntityAction {
  action: (typeof ENTITY_ACTIONS)[number];
  by: string;
  reason: string;
}

/** What an entity knows, and what its query answers. */
export interface EntityState {
  flow: string;
  source: string;
  key: string;
  order: EntityOrder;
  /** A coalescing key's gathering times; null for the other orders. */
  coalesce: CoalesceWindow | null;
  /** While a coalescing key's burst gathers: when its first and its latest event asked (workflow time, ms). */
  burst: { since: number; latest: number } | null;
  last: Applied | null;
  /** Events waiting for their turn, in arrival order. */
  pending: TurnRequest[];
  /** The event running now, if any. */
  running: TurnRequest | null;
  /** The failed event the key waits on, until an operator skips or retries it. */
  parked: (TurnRequest & { failure: string }) | null;
  applied: number;
  superseded: number;
  /** Whether the entity holds its key in the database (it takes it before it gives a turn); false in entities from before. */
  holdsKey: boolean;
  /** The most requests a run carries in `pending` (`CARRIED_REQUESTS` unless its start says); what waits beyond them is in `stored`. */
  carry: number;
  /** A `serial` key's requests waiting in the database, beyond those the run carries; null when none does. */
  stored: StoredRequests | null;
}

/**
 * How many waiting requests an entity's run carries by default (about 200 bytes each): a
 * continue-as-new carries them all, and Temporal refuses an input past 2 MiB. Beyond them, a `serial`
 * key keeps its newest requests in the database and takes them back as its turns reach them; a
 * `latest` or `coalesce` key supersedes every one but the newest at once, as its next turn would.
 */
export const CARRIED_REQUESTS = 1_000;

/** A `serial` key's requests kept in the database: how many, and the oldest of them (its turn comes before any newer one in the run). */
export interface StoredRequests {
  count: number;
  oldest: Applied;
}

/** The oldest of some requests by version, if any. */
export const oldestOf = (requests: readonly TurnRequest[]): TurnRequest | null =>
  requests.reduce<TurnRequest | null>((oldest, request) => (oldest === null || compareVersions(request, oldest) < 0 ? request : oldest), null);

/**
 * A `serial` key's waiting requests split at `keep`: the oldest `keep` stay in the run (in arrival
 * order), the newer ones go to the database.
 */
export function storedBeyond(pending: readonly TurnRequest[], keep: number): { kept: TurnRequest[]; stored: TurnRequest[] } {
  const stored = new Set([...pending].sort(compareVersions).slice(keep));
  return { kept: pending.filter((request) => !stored.has(request)), stored: [...stored] };
}

/** The entity's input: its identity, and what a continue-as-new carries over (without `last`, it reads the database). */
export type EntityInput = Pick<EntityState, 'flow' | 'source' | 'key' | 'order'> & Partial<Omit<EntityState, 'flow' | 'source' | 'key' | 'order'>>;

export const requestTurnSignal = defineSignal<[TurnRequest]>('requestTurn');
export const askTurnUpdate = defineUpdate<TurnAnswer, [TurnRequest]>('askTurn');
export const turnSignal = defineSignal<[Turn]>('turn');
export const turnDoneSignal = defineSignal<[TurnDone]>('turnDone');
/** The event that held a key hands it to the key's entity (`takeKey`): the entity may give turns now. */
export const keyGivenSignal = defineSignal('keyGiven');
export const entityActionSignal = defineSignal<[EntityAction]>('entityAction');
export const entityStateQuery = defineQuery<EntityState>('entityState');

/** One entity per flow, source and key. */
export const entityWorkflowId = (flow: string, source: string, key: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}entity:${flow}:${source}:${key}`;
/**
 * A key's entity starts with the first of Temporal's task priorities (1; unset is 3): every event
 * waiting on a busy key waits for the entity's next workflow task, so it goes before the event
 * workflows' own. Without it, a hot key's entity waited 18 minutes behind thousands of its own
 * events' tasks while their requests reached its run's signal limit (`npm run bench`'s hot key).
 */
export const ENTITY_PRIORITY = { priorityKey: 1 } as const;
/** The flow of an entity's workflow ID (flow names hold no `:`). */
export const entityFlowOf = (entityId: string) => entityId.slice(`${INTERNAL_WORKFLOW_ID_PREFIX}entity:`.length).split(':')[0]!;

/**
 * Orders two versions: negative when `a` is older. Parts compare in turn (numbers as numbers, two
 * date-times as instants, else as text); a missing version is newer than any, and the event IDs
 * (in byte order) break ties.
 */
export function compareVersions(a: Applied, b: Applied): number {
  return compareContent(a.version, b.version) || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0);
}

/** Whether `a` carries a newer version than `b`, by content alone: the same version under another event ID is not newer. */
export function isNewerVersion(a: Applied, b: Applied): boolean {
  return missing(a.version) || compareContent(a.version, b.version) > 0;
}

/** An event without a version (none of its pointers found a number or text). */
const missing = (version: Version) => version.every((part) => part === null);

function compareContent(a: Version, b: Version): number {
  if (missing(a) !== missing(b)) return missing(a) ? 1 : -1;
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const order = comparePart(a[index] ?? null, b[index] ?? null);
    if (order !== 0) return order;
  }
  return 0;
}

/** What an entity does next with the events waiting: the one that runs, and the ones superseded (each with what superseded it). */
export interface NextTurns {
  go: TurnRequest | null;
  superseded: Array<{ request: TurnRequest; after: Applied }>;
  waiting: TurnRequest[];
}

/**
 * The entity's one decision, given what waits and the last event applied. `serial`: the oldest
 * version runs, the rest wait. `latest` and `coalesce` (once its burst has gathered): the newest
 * runs, unless it is not newer than the last one applied; every other one waiting is superseded by it.
 */
export function nextTurns(order: EntityOrder, pending: readonly TurnRequest[], last: Applied | null): NextTurns {
  const waiting = [...pending].sort(compareVersions);
  if (order === 'serial') return { go: waiting.shift() ?? null, superseded: [], waiting };
  const newest = waiting.pop();
  if (!newest) return { go: null, superseded: [], waiting: [] };
  const superseded = waiting.map((request) => ({ request, after: newest as Applied }));
  if (last && !isNewerVersion(newest, last)) return { go: null, superseded: [...superseded, { request: newest, after: last }], waiting: [] };
  return { go: newest, superseded, waiting: [] };
}

function comparePart(a: VersionPart, b: VersionPart): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const instants = [a, b].map((part) => (typeof part === 'string' && DATE_TIME.test(part) ? Date.parse(part) : Number.NaN));
  if (!Number.isNaN(instants[0]!) && !Number.isNaN(instants[1]!) && instants[0] !== instants[1]) return instants[0]! - instants[1]!;
  const [x, y] = [String(a), String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** RFC 3339 date-times, with an offset or Z (Shopify's `2026-12-01T10:00:00-05:00`). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
