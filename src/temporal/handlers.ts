import type * as workflows from '../../workflows';
import { ProviderKind, type WebhookEvent } from '../providers/types';

export type EventWorkflowType = keyof Pick<typeof workflows, 'fulfilCheckout' | 'chargeOrder' | 'notifyGitHub' | 'applySubscriptionEvent' | 'recordEvent'>;

const FLOWS: Record<ProviderKind, Record<string, EventWorkflowType>> = {
  [ProviderKind.STRIPE]: {
    'checkout.session.completed': 'fulfilCheckout',
    'customer.subscription.created': 'applySubscriptionEvent',
    'customer.subscription.updated': 'applySubscriptionEvent',
    'customer.subscription.deleted': 'applySubscriptionEvent',
  },
  [ProviderKind.STANDARD_WEBHOOKS]: { 'order.created': 'chargeOrder' },
  [ProviderKind.GITHUB]: { 'issues.opened': 'notifyGitHub', ping: 'notifyGitHub' },
};

/** The workflow that handles an event; types no flow handles are recorded and completed as ignored. */
export function workflowTypeFor(event: Pick<WebhookEvent, 'provider' | 'type'>): EventWorkflowType {
  return FLOWS[event.provider][event.type] ?? 'recordEvent';
}
