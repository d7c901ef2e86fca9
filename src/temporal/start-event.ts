import { isGrpcServiceError, NamespaceNotFoundError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import { BodyStoreUnavailableError, EventIdConflictError, TemporalUnavailableError } from '../errors';
import { eventWorkflowId, MAX_FIELD_LENGTH, WEBHOOK_EVENT_TYPE, WEBHOOK_SOURCE, WEBHOOK_TENANT, WEBHOOK_VIA, type EventFlow, type EventVia, type WebhookEvent } from '../../contracts';
import type { Queryable } from '../db/database';
import { storeBody, type ReceivedBody, type StartSpec } from '../db/event-bodies';
import { markStarted } from '../db/inbox';
import type { Router } from '../flows';

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
  /**
   * `state` is how the first run stands (`running`, `completed`, `failed`, …), when Temporal says so
   * in time; `started`, whether its workflow has started yet, when the body store answered;
   * `replayOf`, the event ID this source stored the same body under (a replay: nothing started).
   */
  | { status: 'duplicate'; workflowId: string; state?: string; started?: boolean; replayOf?: string };

/** Starts one workflow per event; the receiver depends on this, not on the Temporal client. */
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

/** How long a delivery waits for Temporal before the receiver answers 503. */
export const DEFAULT_START_TIMEOUT_MS = 5_000;

/**
 * How long the process that stored a body has to start its workflow before a sweeper may: longer
 * than a start waits for Temporal, so a sweeper takes only what that process did not do.
 */
export const START_LEASE_MS = 2 * DEFAULT_START_TIMEOUT_MS;

// A failed call with one of these codes means Temporal was not reached or did not answer in time.
const UNAVAILABLE_CODES = new Set<number>([grpcStatus.UNAVAILABLE, grpcStatus.DEADLINE_EXCEEDED, grpcStatus.CANCELLED, grpcStatus.RESOURCE_EXHAUSTED]);

export class TemporalEventStarter implements EventStarter {
  readonly needs = 'Temporal';

  constructor(
    private readonly client: Client,
    /** The body store: every body is stored here before its workflow starts. */
    private readonly db: Queryable,
    private readonly options: { taskQueue: string; startTimeoutMs?: number },
  ) {}

  async start(event: ReceivedEvent, target: StartTarget, via: EventVia = 'delivery'): Promise<StartResult> {
    const { spec, options, ignored } = startOptions(event, target, via, this.options.taskQueue);
    const { workflowId } = options;
    const key = { source: event.source, eventId: event.id };
    let stored;
    try {
      stored = await storeBody(this.db, { ...key, workflowId, provider: event.provider, via, receivedAt: event.receivedAt, bodySha256: event.bodySha256, start: spec, leaseMs: START_LEASE_MS, ignored }, event.body);
    } catch (error) {
      throw new BodyStoreUnavailableError(event.id, { cause: error });
    }
    if ('takenBy' in stored) throw new EventIdConflictError(event.source, event.id, stored.takenBy);
    if ('replayOf' in stored) return { status: 'duplicate', workflowId, replayOf: stored.replayOf };
    if (ignored) return stored.stored ? { status: 'ignored', workflowId } : { status: 'duplicate', workflowId, started: false };
    // Held, or paced by a budget: stored and answered as ACKNOWLEDGE=database does; a sweeper starts it.
    if (stored.stored && stored.heldBy) return { status: 'held', workflowId, hold: stored.heldBy };
    if (stored.stored && stored.pacedBy) return { status: 'accepted', workflowId };
    if (!stored.stored && stored.waiting) return { status: 'duplicate', workflowId, started: false };
    try {
      const handle = await this.withDeadline(() => this.client.workflow.start(spec.flow, options));
      await this.started(key);
      return { status: 'started', workflowId, runId: handle.firstExecutionRunId };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        await this.started(key);
        return { status: 'duplicate', workflowId, state: await this.stateOf(workflowId) };
      }
      if (isUnavailable(error)) throw new TemporalUnavailableError(event.id, { cause: error });
      throw error;
    }
  }

  /**
   * Marks the body's start confirmed in the inbox. Best effort: when it fails, a sweeper takes the
   * row after its lease, finds the workflow started, and marks it then.
   */
  private async started(key: { source: string; eventId: string }): Promise<void> {
    await markStarted(this.db, [key]).catch(() => undefined);
  }

  /**
   * The existing run's state, for the duplicate's answer: a redelivery of a failed event is still
   * a duplicate (the engine stays the dedupe), but says so, for whoever reads the provider's log.
   */
  private async stateOf(workflowId: string): Promise<string | undefined> {
    try {
      const { status } = await this.withDeadline(() => this.client.workflow.getHandle(workflowId).describe());
      return status.name.toLowerCase();
    } catch {
      return undefined;
    }
  }

  async ready(): Promise<boolean> {
    try {
      await this.withDeadline(() => this.client.workflowService.describeNamespace({ namespace: this.client.options.namespace }));
      return true;
    } catch {
      return false;
    }
  }

  private withDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.client.connection.withDeadline(Date.now() + (this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS), fn);
  }
}

/** True when Temporal has a workflow with this ID, running or closed within retention. */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * How an event's workflow is started: its flow, what the inbox keeps to start it (`spec`), and the
 * options `client.workflow.start` gets; `ignored` when its source's routes say `ignore` for its type
 * (stored, nothing started). `npm run bench` starts the same raw.
 */
export function startOptions(event: Omit<ReceivedEvent, 'body'>, { workflowIdPrefix, router }: StartTarget, via: EventVia, taskQueue: string) {
  const flow = router.flowFor(event.type);
  const input = workflowInput(event, flow, router.decidesFromBody);
  const tenant = flow.readTenant(event.payload);
  const spec: StartSpec = { flow: flow.name, input, summary: summaryOf(event, flow.summarize(input.fields!)), ...(tenant !== undefined && { tenant }) };
  return { flow, spec, ignored: router.ignores(event.type), options: workflowStartOptions(eventWorkflowId(workflowIdPrefix, event.id), spec, via, taskQueue) };
}

/**
 * The options of every start of an event workflow, by the receiver or from the inbox: its ID, input,
 * dedupe policies, search attributes and summary.
 */
export function workflowStartOptions(workflowId: string, spec: StartSpec, via: EventVia, taskQueue: string) {
  return {
    workflowId,
    taskQueue,
    args: [spec.input] as [WebhookEvent],
    // A closed run with this ID blocks a new one, and so does a running one: the engine is the dedupe.
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    workflowIdConflictPolicy: 'FAIL' as const,
    typedSearchAttributes: [
      { key: WEBHOOK_SOURCE, value: spec.input.source },
      { key: WEBHOOK_EVENT_TYPE, value: spec.input.type },
      { key: WEBHOOK_VIA, value: via },
      ...(spec.tenant !== undefined ? [{ key: WEBHOOK_TENANT, value: spec.tenant }] : []),
    ],
    staticSummary: spec.summary,
    // Where the cluster enables task queue fairness (docs/operating.md#bulk-days), one tenant's backlog of tasks does not delay another's.
    ...(spec.tenant !== undefined && { priority: { fairnessKey: spec.tenant } }),
  };
}

/** The workflow's input: the event's identity and the fields its flow copies, without the body. */
function workflowInput(event: Omit<ReceivedEvent, 'body'>, flow: EventFlow, decidesFromBody: boolean): WebhookEvent {
  const { source, provider, id, type, occurredAt, receivedAt, subject, bodySha256 } = event;
  // A source whose flows all decide from the signed body may take the same bytes under another unsigned type.
  const replayScope = bodySha256 !== undefined && decidesFromBody ? type : undefined;
  return {
    source,
    provider,
    id,
    type,
    occurredAt,
    receivedAt,
    ...(subject !== undefined && subject.length <= MAX_FIELD_LENGTH && { subject }),
    ...(bodySha256 !== undefined && { bodySha256 }),
    ...(replayScope !== undefined && { replayScope }),
    fields: flow.readFields(event.payload),
  };
}

/** Temporal refuses a static summary over 200 bytes. */
export const MAX_SUMMARY_BYTES = 200;

/**
 * One line a person can read in the Temporal UI's workflow list: `stripe · checkout.session.completed · cs_… · 42.00 EUR`,
 * the last part the flow's own (`FlowDeclaration.summary`), cut to Temporal's 200 bytes on a character boundary.
 */
export function summaryOf(event: Pick<ReceivedEvent, 'source' | 'type' | 'subject'>, flowPart?: string): string {
  const summary = [event.source, event.type, event.subject, flowPart].filter(Boolean).join(' · ');
  if (Buffer.byteLength(summary) <= MAX_SUMMARY_BYTES) return summary;
  let cut = '';
  for (const character of summary) {
    if (Buffer.byteLength(cut + character + '…') > MAX_SUMMARY_BYTES) break;
    cut += character;
  }
  return cut + '…';
}

export function isUnavailable(error: unknown): boolean {
  for (let current = error; current; current = (current as { cause?: unknown }).cause) {
    // A restarted cluster answers this until it has loaded its namespaces; a wrong TEMPORAL_NAMESPACE
    // too, which /readyz reports. Either way Temporal recorded nothing and a retry is the answer.
    if (current instanceof NamespaceNotFoundError) return true;
    if (isGrpcServiceError(current) && UNAVAILABLE_CODES.has(current.code)) return true;
  }
  return false;
}
