import { ProviderKind, WorkflowType, type EventWorkflowType, type WebhookEvent } from '../../contracts';

// Maps, not object literals: an event type is sender-chosen text, and "constructor" or "__proto__"
// must find nothing rather than a property every object inherits.
// Kinds without an entry record every event (recordEvent) until a flow handles their types.
const FLOWS: Partial<Record<ProviderKind, ReadonlyMap<string, EventWorkflowType>>> = {
  [ProviderKind.STRIPE]: new Map([
    ['checkout.session.completed', WorkflowType.fulfilCheckout],
    ['customer.subscription.created', WorkflowType.applySubscriptionEvent],
    ['customer.subscription.updated', WorkflowType.applySubscriptionEvent],
    ['customer.subscription.deleted', WorkflowType.applySubscriptionEvent],
  ]),
  [ProviderKind.STANDARD_WEBHOOKS]: new Map([['order.created', WorkflowType.chargeOrder]]),
  [ProviderKind.SHOPIFY]: new Map([['orders/paid', WorkflowType.fulfilShopifyOrder]]),
  [ProviderKind.GITHUB]: new Map([
    ['issues.opened', WorkflowType.notifyGitHub],
    ['ping', WorkflowType.notifyGitHub],
  ]),
};

/** The workflow that handles an event; types no flow handles are recorded and completed as ignored. */
export function workflowTypeFor(event: Pick<WebhookEvent, 'provider' | 'type'>): EventWorkflowType {
  return FLOWS[event.provider]?.get(event.type) ?? WorkflowType.recordEvent;
}
