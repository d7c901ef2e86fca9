import { defineQuery } from '@temporalio/workflow';
import type { EventFields } from './event-fields';

/** The kinds of provider the receiver can verify (`kind:` in WEBHOOKS_CONFIG). */
export const ProviderKind = {
  STRIPE: 'stripe',
  GITHUB: 'github',
  STANDARD_WEBHOOKS: 'standard-webhooks',
  SVIX: 'svix',
  SHOPIFY: 'shopify',
  PADDLE: 'paddle',
  SQUARE: 'square',
  SLACK: 'slack',
  LINEAR: 'linear',
  TWILIO: 'twilio',
  SENDGRID: 'sendgrid',
  ADYEN: 'adyen',
  HMAC: 'hmac',
} as const;
export type ProviderKind = (typeof ProviderKind)[keyof typeof ProviderKind];

/**
 * One verified delivery, as the event workflow receives it: who sent it, what it is, and the few
 * fields its workflow routes on. The body itself stays in the body store (`event_bodies`, by source
 * and event ID), where activities read it: no body, and no personal data in it, enters Temporal.
 */
export interface WebhookEvent {
  /** The configured source name, the `:source` of `POST /webhooks/:source`. */
  source: string;
  /** The source's provider kind, which (with the type) picks the workflow. */
  provider: ProviderKind;
  /** The provider's event ID (Stripe `id`, GitHub `X-GitHub-Delivery`, Standard Webhooks `webhook-id`). */
  id: string;
  /** The event type (`checkout.session.completed`, `issues.opened`, `order.created`). */
  type: string;
  /** When the provider says the event happened, ISO 8601; the receipt time when the provider does not say. */
  occurredAt: string;
  /** When the receiver verified the delivery, ISO 8601. */
  receivedAt: string;
  /** The ID of the object the event is about, when the provider names one, for people reading the UI. */
  subject?: string;
  /** What the event's workflow routes on, copied from the body by the receiver (its flow's `fields.copy`, `FlowDeclaration.fields`). */
  fields?: EventFields;
  /**
   * The parsed body, only in events started before bodies were stored (still in flight across an
   * upgrade); every other event's body is in the body store.
   */
  payload?: unknown;
  /**
   * SHA-256 (hex) of the signed body, for providers that do not sign the event ID (GitHub): the
   * ledger refuses the same body under a second ID as a replay.
   */
  bodySha256?: string;
  /**
   * The type, when the replay guard refuses `bodySha256` again only under the same type: the flow
   * decides from the signed body (`FlowDeclaration.decidesFromBody`), so the same bytes under another
   * unsigned type are an event of their own.
   */
  replayScope?: string;
  /**
   * The flows a route with several flows or a filter chose for this event (docs/flows.md#routes),
   * each started by the event's `routeEvent` workflow as a subscriber of its own; and the filters
   * that could not decide for it.
   */
  routes?: RoutedFlows;
  /** In a subscriber's run: the flow it is, whose ledger record is its own (`ledgerEventId`). */
  subscriber?: string;
}

/** One flow a route chose for an event: its name, its copied fields, its summary and tenant. */
export interface RoutedFlow {
  flow: string;
  fields: EventFields;
  summary: string;
  tenant?: string;
}

/** What a route with several flows or a filter decided for one event. */
export interface RoutedFlows {
  flows: RoutedFlow[];
  /** The flows whose filters did not take it. */
  filtered: string[];
  /** A filter that threw or yielded no bool for this event: recorded, and no run of that flow. */
  failures: Array<{ flow: string; error: string }>;
}

/**
 * A subscriber's input: the event's identity with the flow's own fields, without what only the
 * event's own run uses (its routes, the replay guard's hash).
 */
export function subscriberEvent(event: WebhookEvent, route: RoutedFlow): WebhookEvent {
  const { source, provider, id, type, occurredAt, receivedAt, subject } = event;
  return { source, provider, id, type, occurredAt, receivedAt, ...(subject !== undefined && { subject }), fields: route.fields, subscriber: route.flow };
}

/**
 * A subscriber's workflow ID: the event's, `~`, the flow's name (`evt_1~notifyFinance`). Derived,
 * so a redelivery, a reset of the event or a replay starts no second run of a flow for one event.
 */
export const subscriberWorkflowId = (eventWorkflowId: string, flow: string) => `${eventWorkflowId}${SUBSCRIBER_SEPARATOR}${flow}`;

export const SUBSCRIBER_SEPARATOR = '~';

/**
 * The event ID its ledger records (claim, outcome, steps) are kept under: the provider's, or for a
 * subscriber, the provider's and its flow's, so each flow of one event has a record of its own.
 */
export const ledgerEventId = (event: Pick<WebhookEvent, 'id' | 'subscriber'>) =>
  event.subscriber === undefined ? event.id : subscriberWorkflowId(event.id, event.subscriber);

/** An event workflow's ID: the provider's event ID, behind the source's optional prefix. */
export const eventWorkflowId = (workflowIdPrefix: string, eventId: string) => workflowIdPrefix + eventId;

/**
 * Every workflow ID durable-webhooks makes for itself (subscriptions, messages, deliveries) starts
 * with this, and the receiver refuses an event whose workflow ID would: a signed event can never
 * take the ID of an internal workflow first.
 */
export const INTERNAL_WORKFLOW_ID_PREFIX = 'durable-webhooks:';

/** True for the IDs no event workflow may have. */
export const isInternalWorkflowId = (workflowId: string) => workflowId.startsWith(INTERNAL_WORKFLOW_ID_PREFIX);

/** What every event workflow returns. */
export interface EventOutcome {
  outcome: string;
  source: string;
  eventId: string;
  type: string;
  /** A keyed flow's event (docs/entities.md): its key, and the event applied to the key before it had its turn (null: none). */
  entity?: { key: string; after: string | null };
}

/** What the `status` query answers for every event workflow. */
export interface EventProgress {
  eventId: string;
  type: string;
  stepsDone: string[];
  /** What the workflow waits for, in words; null when it is not waiting. */
  waitingFor: string | null;
  /** While it waits: the signals that end the wait, until when (ISO 8601), and what an operator's signal must carry. */
  awaiting: Awaiting | null;
  outcome: string | null;
  /** A keyed flow's event (docs/entities.md): the key whose turns it takes; absent otherwise. */
  entity?: { flow: string; source: string; key: string };
}

export interface Awaiting {
  signals: string[];
  until: string | null;
  /** Fields operators' tools add to the signal's argument, so that a reset's re-applied copy answers this same wait. */
  signalFields?: Record<string, unknown>;
}

export const statusQuery = defineQuery<EventProgress>('status');

/** Where an event stands in the ledger. */
export const EventStatus = {
  PROCESSING: 'processing',
  COMPLETED: 'completed',
  FAILED: 'failed',
  IGNORED: 'ignored',
} as const;
export type EventStatus = (typeof EventStatus)[keyof typeof EventStatus];

/** The first activity of every event workflow claims the event for its run chain. */
export interface EventClaim {
  source: string;
  eventId: string;
  type: string;
  workflowId: string;
  /** The run chain's first run: kept by resets and retries, new for a second start with the same ID. */
  firstExecutionRunId: string;
  /** `WebhookEvent.bodySha256`, when the provider does not sign the event ID. */
  bodySha256?: string;
  /** `WebhookEvent.replayScope`: the body is refused again only under this type. */
  replayScope?: string;
}

/**
 * What a claim found: this run chain owns the event; another chain does (a redelivery after
 * Temporal's retention); or another event ID carried the same signed body first (a replay).
 */
export type ClaimResult = 'claimed' | 'duplicate' | 'replay';

/** The last ledger write of an event workflow: how it ended, and what it made. */
export interface EventCompletion {
  source: string;
  eventId: string;
  status: EventStatus;
  outcome: unknown;
}

/** The ledger key of one step of one event. */
export interface StepKey {
  source: string;
  eventId: string;
  step: string;
}

/**
 * A value an activity reads from the event's stored body when it runs (a JSON pointer, and what to
 * use when the body has nothing there): how personal data reaches a side effect (an email address,
 * an order row) without passing through Temporal.
 */
export interface BodyField {
  fromBody: string;
  otherwise?: string;
}

/** Text whose parts may be read from the body: `['Issue ', { fromBody: '/issue/title' }]`. */
export type Text = string | ReadonlyArray<string | BodyField>;

/** Text as it may be shown where the body must not be (summaries, logs): each body field as `{/pointer}`. */
export function describeText(text: Text | BodyField): string {
  if (typeof text === 'string') return text;
  const parts = 'fromBody' in text ? [text] : text;
  return parts.map((part) => (typeof part === 'string' ? part : `{${part.fromBody}}`)).join('');
}

/**
 * One step of an event that reads its body: the ledger key, and the body itself for events started
 * before bodies were stored (`WebhookEvent.payload`).
 */
export interface BodyStep extends StepKey {
  payload?: unknown;
  /** Whose body it reads, when not `eventId`'s: a subscriber's steps are its own, its body is the event's. */
  bodyOf?: string;
}
