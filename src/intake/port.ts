import type { EventVia, WebhookEvent } from '../../contracts';
import type { ReceivedBody } from '../db/event-bodies';
import type { Router } from '../flows';

/**
 * The intake's port: what the HTTP router and backfill hand over (a verified event and where it
 * goes) and what they get back. They depend on this, never on Temporal or the inbox.
 */

/** A verified event as it arrived: what its workflow is told, the parsed body, and the bytes to store. */
export interface ReceivedEvent extends Omit<WebhookEvent, 'fields' | 'payload'> {
  payload: unknown;
  body: ReceivedBody;
}

/** Where an event is started: its source's workflow ID prefix, and the routes that pick its flow. */
export interface StartTarget {
  workflowIdPrefix: string;
  router: Router;
}

export type StartResult =
  | { status: 'started'; workflowId: string; runId: string }
  /** Committed to the body store; its workflow starts after the answer (ACKNOWLEDGE=database, or a source with a standing rate). */
  | { status: 'accepted'; workflowId: string }
  /** Committed to the body store, and held (`durable-webhooks hold`): nothing starts until its release. */
  | { status: 'held'; workflowId: string; hold: string }
  /** Committed to the body store; its source's routes say `ignore` for its type, so nothing starts. */
  | { status: 'ignored'; workflowId: string }
  /** Committed to the body store; its route has filters and none took it, so nothing starts. */
  | { status: 'filtered'; workflowId: string }
  /**
   * `state` is how the first run stands (`running`, `completed`, `failed`, …), when Temporal says so
   * in time; `started`, whether its workflow has started yet, when the body store answered;
   * `replayOf`, the event ID this source stored the same body under (a replay: nothing started).
   */
  | { status: 'duplicate'; workflowId: string; state?: string; started?: boolean; replayOf?: string };

/** Starts one workflow per event. */
export interface EventStarter {
  /**
   * Stores the event's body, then starts the flow its source routes it to, with the workflow ID
   * `workflowIdPrefix + event.id`, tagged with how it came; the input holds the flow's copied
   * fields, never the body.
   * @throws BodyStoreUnavailableError or TemporalUnavailableError when either does not confirm; nothing is started then.
   */
  start(event: ReceivedEvent, target: StartTarget, via?: EventVia): Promise<StartResult>;
  /** What a 2xx waits for, so what /readyz checks: the body store, or Temporal too. */
  readonly needs: 'PostgreSQL' | 'Temporal';
  /** True when what it needs answers (for Temporal, for our namespace). */
  ready(): Promise<boolean>;
}
