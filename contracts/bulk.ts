import { defineQuery } from '@temporalio/workflow';
import { INTERNAL_WORKFLOW_ID_PREFIX, type ProviderKind } from './events';

/** What a bulk job does to each event it matches. */
export const BULK_ACTIONS = ['retry', 'reset', 'cancel', 'terminate', 'signal'] as const;
export type BulkActionName = (typeof BULK_ACTIONS)[number];

/** Which events a bulk job acts on: the filter of `durable-webhooks events list` (docs/operating.md#the-filter). */
export interface BulkFilter {
  source?: string;
  /** An event type, or a prefix ending in `*`. */
  type?: string;
  status?: string;
  since?: string;
  until?: string;
  via?: string;
  tenant?: string;
  /** A failure class, or its last part. */
  errorClass?: string;
  /** A raw visibility query, ANDed with the rest. */
  query?: string;
  /** A failure group's fingerprint (the console's failure groups): its failed events. */
  group?: string;
}

export interface BulkInput {
  action: BulkActionName;
  filter: BulkFilter;
  /** reset: the point to reset to (`first`, `last-task`, `last-failure`, a history event ID); retry is reset to `last-failure`. */
  to?: string;
  /** Why; kept in each event's history (resets, terminations) and in the job's own. */
  reason: string;
  /** signal: its name and argument, checked as `durable-webhooks events signal` checks it. */
  signal?: { name: string; data?: unknown };
  /** Events acted on per second, at most; as fast as Temporal answers without one. */
  rate?: number;
  /** Who started the job: an admin token's name, or the operator's user name. */
  by: string;
  /**
   * The most events it acts on: how many the operator confirmed (its filter's `until` is fixed at
   * that count), so events that match later are not acted on. @default MAX_BULK_EVENTS
   */
  limit?: number;
}

/** What an operator confirms after a dry run: that many events, received until then. */
export interface BulkConfirmation {
  count: number;
  /** ISO 8601: the filter's end, fixed when the dry run counted. */
  until: string;
}

/** What happened to one event: acted on, skipped (and why: `completed`, `running`, `closed`, `not found`), or failed (and why). */
export interface BulkItemResult {
  eventId: string;
  outcome: 'done' | 'skipped' | 'failed';
  detail: string;
}

/** A bulk job's progress, as its query answers it and its result ends it. */
export interface BulkProgress {
  state: 'listing' | 'running' | 'completed' | 'stopped';
  /** Events the filter matched when the job listed them. */
  total: number;
  done: number;
  /** Skipped events by reason, e.g. `{ completed: 50 }`. */
  skipped: Record<string, number>;
  failed: number;
  /** The first failures, one line each (at most MAX_LISTED_FAILURES; `failed` counts them all). */
  failures: Array<{ eventId: string; error: string }>;
}

/** The most events one bulk job acts on: narrow the filter (`--since`, `--until`) for more. */
export const MAX_BULK_EVENTS = 10_000;
/** Failures a job lists; the rest are counted. */
export const MAX_LISTED_FAILURES = 100;

/** Events a job acts on per activity: a fifth of a second's worth at its rate, at most 20. */
export function bulkBatchSize(rate: number | undefined): number {
  return rate === undefined ? 20 : Math.max(1, Math.min(20, Math.ceil(rate / 5)));
}

export const bulkProgressQuery = defineQuery<BulkProgress>('bulkProgress');

/** A bulk job's workflow ID: the operator watches and stops it by this ID. */
export const bulkJobWorkflowId = (action: BulkActionName, id: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}bulk:${action}:${id}`;
export const isBulkJobId = (workflowId: string) => workflowId.startsWith(`${INTERNAL_WORKFLOW_ID_PREFIX}bulk:`);

/**
 * `durable-webhooks routes replay`: runs one flow over the stored events its routes send to it and
 * it has not run for (docs/flows.md#routes-replay), each as the event's subscriber `<event>~<flow>`.
 */
export interface RouteReplayInput {
  flow: string;
  /** The stored events it reads: received in [since, until), of a source, of a type or `prefix*`. */
  window: { since: string; until: string; source?: string; type?: string };
  /** Each source's routes when the job was asked for (WEBHOOKS_CONFIG as the CLI read it): an event runs the flow only where they send it there. */
  sources: Array<{ name: string; kind: ProviderKind; routes?: Readonly<Record<string, unknown>> }>;
  /** Runs started per second, at most. */
  rate?: number;
  by: string;
}

/** Where a replay stands: events read, runs started, skipped by reason, failures; the last event read, where it goes on. */
export interface RouteReplayProgress {
  state: 'running' | 'completed' | 'stopped';
  read: number;
  started: number;
  skipped: Record<string, number>;
  failed: number;
  failures: Array<{ eventId: string; error: string }>;
  after: { source: string; eventId: string } | null;
}

/**
 * Events a replay reads per batch: a second's worth at its rate, at most 100. Each batch costs a
 * timer and a round trip to the worker; a fifth of a second's worth (a bulk job's) would make the
 * timers, not the rate, its pace.
 */
export function replayBatchSize(rate: number | undefined): number {
  return rate === undefined ? 100 : Math.max(1, Math.min(100, Math.ceil(rate)));
}

export const routeReplayProgressQuery = defineQuery<RouteReplayProgress>('routeReplayProgress');

/** A replay job's workflow ID: the flow's name and the job's own ID. */
export const routeReplayWorkflowId = (flow: string, id: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}routes-replay:${flow}:${id}`;
