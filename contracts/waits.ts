import type { Duration } from '@temporalio/common';
import { defineSignal } from '@temporalio/workflow';
import type { EventFields, FieldValue } from './event-fields';

/**
 * A flow's wait for another event of its source (docs/flows.md#wait-for-another-event), declared
 * beside the flow so that the receiver indexes what the match needs from every event of the type
 * as it is stored, before any flow waits.
 */
export interface EventWaitDeclaration {
  /** The awaited event's source, by name (a carrier's, for a shipment); the waiting event's own when absent. */
  source?: string;
  /** The awaited event's type. */
  type: string;
  /**
   * A CEL expression over the awaited event (`body`, `event`) and the waiting flow's own values
   * (`waiting`). Its top level compares one body field to one waiting value with `==`
   * (`body.data.object.payment_intent == waiting.paymentIntent`, then `&&` anything else): stored
   * events are found by that field.
   */
  match: string;
  /** What the waiting flow gets from the awaited event, by JSON pointer into its verified body (no personal data: it goes into history). */
  fields?: Readonly<Record<string, string>>;
  /** How long the flow waits at most, as a Temporal duration (`30 days`). */
  timeout: Duration;
}

/** A declared wait, named: what `waitForEvent` is given. */
export interface EventWait extends EventWaitDeclaration {
  /** Its name in the flow's `waits`. */
  readonly name: string;
  /** The waiting flow's name. */
  readonly flow: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** The values of the waiting flow that a match reads as `waiting.<name>`. */
export type WaitingValues = Record<string, FieldValue>;

/** The event a wait matched: its ID, type, when it was received, and the fields the wait copies. */
export interface AwaitedEvent {
  eventId: string;
  type: string;
  receivedAt: string;
  fields: EventFields;
}

/** One waiting workflow's wait, as `registerWaiter` records it. */
export interface WaiterRegistration {
  workflowId: string;
  /** The source whose events it waits for: the wait's, or the waiting event's own. */
  source: string;
  wait: EventWait;
  waiting: WaitingValues;
}

/** A registered wait: where it stands, until when it waits (ISO 8601, from its first registration) and how long that is from now. */
export type RegisteredWait = WaitState & { until: string; remainingMs: number };

/** Where a wait stands: an event matched it (stored before it began, or since), it still waits, or its time is up. */
export type WaitState = { matched: AwaitedEvent } | { waiting: true } | { timedOut: true };

/** The awaited event, sent to the waiting workflow when it arrives (re-sent by the sweepers until Temporal takes it). */
export const eventArrivedSignal = defineSignal<[AwaitedEvent & { wait: string }]>('eventArrived');
