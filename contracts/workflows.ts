import type { SignalDefinition } from '@temporalio/workflow';
import type { EventOutcome, WebhookEvent } from './events';
import type { DeliveryInput, DeliveryState, PublishInput, PublishResult } from './messages';
import { approveSignal, rejectSignal, retryPaymentSignal } from './orders';
import type { BackfillCounts, ReconcileInput } from './reconcile';
import { applySignal, type SubscriptionEntityInput, type SubscriptionState } from './subscriptions';

/**
 * Every workflow type the worker registers, with its input and result. Clients start workflows by
 * these names (`WorkflowType`) and the signatures type their arguments; a test checks that
 * `workflows/` exports each one with this signature.
 */
export interface Workflows {
  fulfilCheckout(event: WebhookEvent): Promise<EventOutcome>;
  fulfilShopifyOrder(event: WebhookEvent): Promise<EventOutcome>;
  chargeOrder(event: WebhookEvent): Promise<EventOutcome>;
  notifyGitHub(event: WebhookEvent): Promise<EventOutcome>;
  applySubscriptionEvent(event: WebhookEvent): Promise<EventOutcome>;
  recordEvent(event: WebhookEvent): Promise<EventOutcome>;
  subscriptionEntity(input: SubscriptionEntityInput): Promise<SubscriptionState>;
  publishMessage(input: PublishInput): Promise<PublishResult>;
  deliverMessage(input: DeliveryInput): Promise<DeliveryState>;
  reconcile(input: ReconcileInput): Promise<BackfillCounts>;
}

export type WorkflowType = keyof Workflows;

/** Workflow type names, for clients that start or signal a workflow by name. */
export const WorkflowType: { readonly [Type in WorkflowType]: Type } = {
  fulfilCheckout: 'fulfilCheckout',
  fulfilShopifyOrder: 'fulfilShopifyOrder',
  chargeOrder: 'chargeOrder',
  notifyGitHub: 'notifyGitHub',
  applySubscriptionEvent: 'applySubscriptionEvent',
  recordEvent: 'recordEvent',
  subscriptionEntity: 'subscriptionEntity',
  publishMessage: 'publishMessage',
  deliverMessage: 'deliverMessage',
  reconcile: 'reconcile',
};

/** The workflows one webhook event can start: one per event, its ID the event's. */
export type EventWorkflowType = Extract<WorkflowType, 'fulfilCheckout' | 'fulfilShopifyOrder' | 'chargeOrder' | 'notifyGitHub' | 'applySubscriptionEvent' | 'recordEvent'>;

/** The signals each workflow type handles; operators may send only these. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of signals with different arguments
export const SIGNALS: Partial<Record<WorkflowType, ReadonlyArray<SignalDefinition<any[]>>>> = {
  chargeOrder: [approveSignal, rejectSignal, retryPaymentSignal],
  subscriptionEntity: [applySignal],
};

/**
 * Signals that mean something only while the workflow waits for them (`EventProgress.awaiting`);
 * operators' tools refuse them at other times. The rest may come early (an approval before the
 * order is held).
 */
export const SIGNALS_ONLY_WHILE_AWAITED: ReadonlySet<string> = new Set([retryPaymentSignal.name]);
