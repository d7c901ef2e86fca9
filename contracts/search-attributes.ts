import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The configured source that received the event (`stripe`, `github`, `standard`, …). */
export const WEBHOOK_SOURCE = defineSearchAttributeKey('WebhookSource', SearchAttributeType.KEYWORD);
/** The provider's event type (`checkout.session.completed`, `issues.opened`, …). */
export const WEBHOOK_EVENT_TYPE = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);

/** How the event reached us: `delivery` (a webhook) or `backfill` (a provider's API). */
export const WEBHOOK_VIA = defineSearchAttributeKey('WebhookVia', SearchAttributeType.KEYWORD);
export type EventVia = 'delivery' | 'backfill';

/** The tenant its flow names (a Stripe Connect account, a Shopify shop, a GitHub App installation); set at start. */
export const WEBHOOK_TENANT = defineSearchAttributeKey('WebhookTenant', SearchAttributeType.KEYWORD);

/**
 * How a failed event failed: its failure class (`chargeOrder › CardDeclined`) and the class's last
 * part (`CardDeclined`), so either finds it. Set by the workflow when it fails.
 */
export const WEBHOOK_ERROR_CLASS = defineSearchAttributeKey('WebhookErrorClass', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTES = [WEBHOOK_SOURCE, WEBHOOK_EVENT_TYPE, WEBHOOK_VIA, WEBHOOK_TENANT, WEBHOOK_ERROR_CLASS];
