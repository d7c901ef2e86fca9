import { ProviderKind, WorkflowType, type EventWorkflowType, type WebhookEvent } from '../../contracts';

const FLOWS: Record<ProviderKind, Record<string, EventWorkflowType>> = {
  [ProviderKind.STRIPE]: {
    'checkout.session.completed': WorkflowType.fulfilCheckout,
    'customer.subscription.created': WorkflowType.applySubscriptionEvent,
    'customer.subscription.updated': WorkflowType.applySubscriptionEvent,
    'customer.subscription.deleted': WorkflowType.applySubscriptionEvent,
  },
  [ProviderKind.STANDARD_WEBHOOKS]: { 'order.created': WorkflowType.chargeOrder },
  [ProviderKind.GITHUB]: { 'issues.opened': WorkflowType.notifyGitHub, ping: WorkflowType.notifyGitHub },
};

/** The workflow that handles an event; types no flow handles are recorded and completed as ignored. */
export function workflowTypeFor(event: Pick<WebhookEvent, 'provider' | 'type'>): EventWorkflowType {
  return FLOWS[event.provider][event.type] ?? WorkflowType.recordEvent;
}
