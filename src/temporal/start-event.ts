import { isGrpcServiceError, NamespaceNotFoundError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import { TemporalUnavailableError } from '../errors';
import { eventWorkflowId, WEBHOOK_EVENT_TYPE, WEBHOOK_SOURCE, WEBHOOK_VIA, type EventVia, type WebhookEvent } from '../../contracts';
import { workflowTypeFor } from './handlers';

export type StartResult =
  | { status: 'started'; workflowId: string; runId: string }
  /** `state` is how the first run stands (`running`, `completed`, `failed`, …), when Temporal says so in time. */
  | { status: 'duplicate'; workflowId: string; state?: string };

/** Starts one workflow per event; the receiver depends on this, not on the Temporal client. */
export interface EventStarter {
  /**
   * Starts the event's workflow, whose ID is `workflowIdPrefix + event.id`, tagged with how it came.
   * @throws TemporalUnavailableError when Temporal does not confirm in time; nothing is recorded then.
   */
  start(event: WebhookEvent, workflowIdPrefix: string, via?: EventVia): Promise<StartResult>;
  /** True when Temporal answers for our namespace. */
  ready(): Promise<boolean>;
}

/** How long a delivery waits for Temporal before the receiver answers 503. */
export const DEFAULT_START_TIMEOUT_MS = 5_000;

// A failed call with one of these codes means Temporal was not reached or did not answer in time.
const UNAVAILABLE_CODES = new Set<number>([grpcStatus.UNAVAILABLE, grpcStatus.DEADLINE_EXCEEDED, grpcStatus.CANCELLED, grpcStatus.RESOURCE_EXHAUSTED]);

export class TemporalEventStarter implements EventStarter {
  constructor(
    private readonly client: Client,
    private readonly options: { taskQueue: string; startTimeoutMs?: number },
  ) {}

  async start(event: WebhookEvent, workflowIdPrefix: string, via: EventVia = 'delivery'): Promise<StartResult> {
    const workflowId = eventWorkflowId(workflowIdPrefix, event.id);
    try {
      const handle = await this.withDeadline(() =>
        this.client.workflow.start(workflowTypeFor(event), {
          workflowId,
          taskQueue: this.options.taskQueue,
          args: [event],
          // A closed run with this ID blocks a new one, and so does a running one: the engine is the dedupe.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'FAIL',
          typedSearchAttributes: [
            { key: WEBHOOK_SOURCE, value: event.source },
            { key: WEBHOOK_EVENT_TYPE, value: event.type },
            { key: WEBHOOK_VIA, value: via },
          ],
          staticSummary: summaryOf(event),
        }),
      );
      return { status: 'started', workflowId, runId: handle.firstExecutionRunId };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return { status: 'duplicate', workflowId, state: await this.stateOf(workflowId) };
      if (isUnavailable(error)) throw new TemporalUnavailableError(event.id, { cause: error });
      throw error;
    }
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

/** Temporal refuses a static summary over 200 bytes. */
export const MAX_SUMMARY_BYTES = 200;

/**
 * One line a person can read in the Temporal UI's workflow list: `stripe · checkout.session.completed · cs_… · 42.00 EUR`,
 * cut to Temporal's 200 bytes on a character boundary.
 */
export function summaryOf(event: WebhookEvent): string {
  const summary = [event.source, event.type, event.subject, amountOf(event.payload)].filter(Boolean).join(' · ');
  if (Buffer.byteLength(summary) <= MAX_SUMMARY_BYTES) return summary;
  let cut = '';
  for (const character of summary) {
    if (Buffer.byteLength(cut + character + '…') > MAX_SUMMARY_BYTES) break;
    cut += character;
  }
  return cut + '…';
}

/** The amount of a Stripe object (`data.object`) or a Standard Webhooks body (`data`), in major units. */
function amountOf(payload: unknown): string | undefined {
  const data = (payload as { data?: Record<string, unknown> } | null)?.data;
  const object = (data?.object ?? data) as { amount_total?: unknown; amount?: unknown; currency?: unknown } | undefined;
  const amount = object?.amount_total ?? object?.amount;
  if (typeof amount !== 'number' || typeof object?.currency !== 'string') return undefined;
  return `${(amount / 100).toFixed(2)} ${object.currency.toUpperCase()}`;
}

function isUnavailable(error: unknown): boolean {
  for (let current = error; current; current = (current as { cause?: unknown }).cause) {
    // A restarted cluster answers this until it has loaded its namespaces; a wrong TEMPORAL_NAMESPACE
    // too, which /readyz reports. Either way Temporal recorded nothing and a retry is the answer.
    if (current instanceof NamespaceNotFoundError) return true;
    if (isGrpcServiceError(current) && UNAVAILABLE_CODES.has(current.code)) return true;
  }
  return false;
}
