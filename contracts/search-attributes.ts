import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The configured source that received the event (`stripe`, `github`, `standard`, …). */
export const WEBHOOK_SOURCE = defineSearchAttributeKey('WebhookSource', SearchAttributeType.KEYWORD);
/** The provider's event type (`checkout.session.completed`, `issues.opened`, …). */
export const WEBHOOK_EVENT_TYPE = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);

/** How the event reached us: `delivery` (a webhook) or `backfill` (a provider's API). */
export const WEBHOOK_VIA = defineSearchAttributeKey('WebhookVia', SearchAttributeType.KEYWORD);
export type EventVia = 'delivery' | 'backfill';

export const SEARCH_ATTRIBUTES = [WEBHOOK_SOURCE, WEBHOOK_EVENT_TYPE, WEBHOOK_VIA];
