import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  TemporalFailure,
  workflowInfo,
} from '@temporalio/workflow';
import {
  describeText,
  statusQuery,
  type Activities,
  type Awaiting,
  type BodyStep,
  type ClaimResult,
  type ChargeInput,
  type EmailInput,
  type EventFields,
  type EventOutcome,
  type EventProgress,
  type EventStatus,
  type Flow,
  type WebhookEvent,
} from '../contracts';

const remoteDb = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds' });
const localDb = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds' });

/** The patch that moved database steps to local activities; histories without its marker replay as before. */
const LOCAL_DB_STEPS = 'database-steps-as-local-activities';

/**
 * Database work (claim, order rows, settings, completion): quick, idempotent, retried until it
 * succeeds, so it runs as local activities in the worker that runs the workflow, with no task queue
 * round trip and fewer history events. A workflow started before this change keeps scheduling them
 * as activities where its history says so (`patched`).
 */
export const db = new Proxy({} as Activities, {
  get: (_target, name: keyof Activities) => (...args: [never]) => (patched(LOCAL_DB_STEPS) ? localDb : remoteDb)[name](...args),
});

/**
 * Calls to Stripe and the email API. Their idempotency keys live 24 hours, so retries stop well
 * inside that window; the ledger covers anything later.
 */
export const external = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '23 hours',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Sends an email, its activity summarised for the Web UI as `email <to>: <subject>`, body fields as `{/pointer}`. */
export function sendEmail(input: EmailInput) {
  return external.sendEmail.executeWithOptions({ summary: `email ${describeText(input.to)}: ${describeText(input.subject)}` }, [input]);
}

/** Charges the order through Stripe, its activity summarised as `charge 42.00 EUR to cus_…` (and `(attempt 2, pm_…)` on a retry). */
export function charge(input: ChargeInput) {
  const retry = input.attempt && input.attempt > 1 ? ` (attempt ${input.attempt}, ${input.paymentMethod})` : '';
  return external.chargeOrder.executeWithOptions({ summary: `charge ${formatAmount(input.amount, input.currency)} to ${input.customer}${retry}` }, [input]);
}

/** `42.00 EUR` from minor units. */
export function formatAmount(amount: number, currency: string): string {
  return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
}

/**
 * Where an event workflow stands: answered by the `status` query, and shown as the Temporal UI's
 * current details (steps done, what it waits for and until when, how it ended), updated at every change.
 */
export class Progress implements EventProgress {
  readonly stepsDone: string[] = [];
  waitingFor: string | null = null;
  awaiting: Awaiting | null = null;
  outcome: string | null = null;

  constructor(
    readonly eventId: string,
    readonly type: string,
  ) {
    setHandler(statusQuery, () => this);
    this.show();
  }

  done(step: string): void {
    this.stepsDone.push(step);
    this.show();
  }

  /** Starts waiting (for what, in words, and the signals that end it), or stops (`null`). */
  waitFor(what: string | null, awaiting: Awaiting | null = null): void {
    this.waitingFor = what;
    this.awaiting = what === null ? null : awaiting;
    this.show();
  }

  end(outcome: string): void {
    this.outcome = outcome;
    this.show();
  }

  private show(): void {
    setCurrentDetails(
      [
        `**Steps done:** ${this.stepsDone.join(', ') || 'none yet'}`,
        ...(this.waitingFor ? [`**Waiting for:** ${this.waitingFor}${this.awaiting?.until ? `, until ${this.awaiting.until}` : ''}`] : []),
        ...(this.outcome ? [`**Outcome:** ${this.outcome}`] : []),
      ].join('\n\n'),
    );
  }
}

/**
 * The time of the current workflow task: the sandbox's `Date`, which Temporal fixes per task, so a
 * replay computes the same deadlines.
 */
export function workflowTime(): Date {
  return new Date();
}

/**
 * Records how the event ended in the ledger, sets the outcome the `status` query reports, and
 * returns it as the workflow's result: the last step of every event workflow that claimed its event.
 */
export async function finish(event: WebhookEvent, progress: Progress, outcome: string, ledger: { status: EventStatus; detail: unknown }): Promise<EventOutcome> {
  await db.completeEvent({ source: event.source, eventId: event.id, status: ledger.status, outcome: ledger.detail });
  progress.end(outcome);
  return { outcome, source: event.source, eventId: event.id, type: event.type };
}

/**
 * The frame of every event workflow: claim the event for this run chain (or complete as a
 * duplicate, doing nothing), then run the flow. A flow that fails or is cancelled records `failed`
 * in the ledger before the workflow ends, so the ledger never says `processing` for an event
 * Temporal has stopped working on.
 */
export async function handleEvent(event: WebhookEvent, flow: (progress: Progress) => Promise<EventOutcome>): Promise<EventOutcome> {
  const progress = new Progress(event.id, event.type);
  const claimed = await claim(event, progress);
  if (claimed !== 'claimed') return nothingToDo(event, progress, claimed);
  try {
    return await flow(progress);
  } catch (error) {
    if (!(error instanceof TemporalFailure)) throw error;
    const outcome = isCancellation(error) ? { cancelled: true } : { failure: error.message, type: error instanceof ApplicationFailure ? error.type : error.name };
    await CancellationScope.nonCancellable(() => db.completeEvent({ source: event.source, eventId: event.id, status: 'failed', outcome: { ...outcome, ...failureDetail(error) } }));
    if (progress.outcome === null) progress.end(isCancellation(error) ? 'cancelled' : 'failed');
    throw error;
  }
}

/** What a flow put on its own failure for the ledger (`ApplicationFailure` details), if anything. */
function failureDetail(error: TemporalFailure): Record<string, unknown> {
  const [detail] = error instanceof ApplicationFailure ? (error.details ?? []) : [];
  return typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>) : {};
}

/** The result of a workflow whose event another run chain owns, or whose body another event carried first: nothing done. */
function nothingToDo(event: WebhookEvent, progress: Progress, outcome: 'duplicate' | 'replay'): EventOutcome {
  progress.end(outcome);
  return { outcome, source: event.source, eventId: event.id, type: event.type };
}

/** Claims the event in the ledger for this run chain; see `ClaimResult`. */
async function claim(event: WebhookEvent, progress: Progress): Promise<ClaimResult> {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const claimed = await db.claimEvent({ source: event.source, eventId: event.id, type: event.type, workflowId, firstExecutionRunId, bodySha256: event.bodySha256 });
  progress.done('claim');
  return claimed;
}

/**
 * The Idempotency-Key of this event's calls to Stripe and the email API: its workflow ID (the event
 * ID behind the source's prefix, so two sources' events with one ID never share a key), plus the
 * step when a flow makes more than one call of a kind.
 */
export function idempotencyKey(step?: string): string {
  const { workflowId } = workflowInfo();
  return step ? `${workflowId}:${step}` : workflowId;
}

/** The ledger key of one step of this event, and the body of an event started before bodies were stored. */
export function stepOf(event: WebhookEvent, step: string): BodyStep {
  return { source: event.source, eventId: event.id, step, ...(event.payload !== undefined && { payload: event.payload }) };
}

/** The fields the receiver copied for this flow; an event started before it did has its body instead. */
export function fieldsOf(event: WebhookEvent, flow: Flow): EventFields {
  return event.fields ?? flow.readFields(event.payload);
}
