import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The configured source that received the event (`stripe`, `github`, `standard`, …). */
export const WEBHOOK_SOURCE = defineSearchAttributeKey('WebhookSource', SearchAttributeType.KEYWORD);
/** The provider's event type (`checkout.session.completed`, `issues.opened`, …). */
export const WEBHOOK_EVENT_TYPE = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [WEBHOOK_SOURCE, WEBHOOK_EVENT_TYPE];
