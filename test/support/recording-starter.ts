import { eventWorkflowId, type EventVia, type WebhookEvent } from '../../contracts';
import { TemporalUnavailableError } from '../../src/core/delivery-errors';
import type { EventStarter, StartResult, StartTarget } from '../../src/intake/port';

/** Temporal's default `limit.maxIDLength`: longer workflow IDs are refused with INVALID_ARGUMENT. */
const MAX_WORKFLOW_ID_BYTES = 1000;

/**
 * An EventStarter for tests of the receiver's edge, with no Temporal behind it: every start call
 * is in `calls` with the workflow type it picks, and like the engine it refuses an over-long ID,
 * starts a workflow ID once and answers later starts `duplicate`. `unavailable` makes it fail as
 * an unreachable Temporal does.
 */
export class RecordingStarter implements EventStarter {
  readonly calls: Array<{ event: WebhookEvent; workflowId: string; workflowType: string; via: EventVia }> = [];
  readonly workflowIds = new Set<string>();
  unavailable = false;
  /** Event IDs whose start fails as an unreachable Temporal's would, while the others start. */
  readonly unavailableFor = new Set<string>();

  /** The events whose workflows were started (not the duplicates). */
  get started(): WebhookEvent[] {
    return this.calls.filter((call, index) => this.calls.findIndex((other) => other.workflowId === call.workflowId) === index).map((call) => call.event);
  }

  async start(event: WebhookEvent, { workflowIdPrefix, router }: StartTarget, via: EventVia = 'delivery'): Promise<StartResult> {
    if (this.unavailable || this.unavailableFor.has(event.id)) throw new TemporalUnavailableError({ eventId: event.id });
    const workflowId = eventWorkflowId(workflowIdPrefix, event.id);
    if (Buffer.byteLength(workflowId) > MAX_WORKFLOW_ID_BYTES) throw new Error(`WorkflowId length exceeds limit.`);
    this.calls.push({ event, workflowId, workflowType: router.flowFor(event.type).name, via });
    if (this.workflowIds.has(workflowId)) return { status: 'duplicate', workflowId };
    this.workflowIds.add(workflowId);
    return { status: 'started', workflowId, runId: `run-${this.workflowIds.size}` };
  }

  readonly needs = 'Temporal';

  async ready(): Promise<boolean> {
    return !this.unavailable;
  }
}
