import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

/** The configured source that received the event (`stripe`, `github`, `standard`, …). */
export const WEBHOOK_SOURCE = defineSearchAttributeKey('WebhookSource', SearchAttributeType.KEYWORD);
/** The provider's event type (`checkout.session.completed`, `issues.opened`, …). */
export const WEBHOOK_EVENT_TYPE = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [WEBHOOK_SOURCE, WEBHOOK_EVENT_TYPE];

/** Stripe retries a failed delivery for up to 3 days; keep closed runs (and so engine dedupe) longer. */
export const MIN_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/**
 * Registers our search attributes and raises the namespace's retention to at least 7 days.
 * Safe to run on every start, against the dev server or any self-hosted cluster.
 */
export async function prepareNamespace(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.filter((key) => !customAttributes?.[key.name]);
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
  }

  const { config } = await connection.workflowService.describeNamespace({ namespace });
  const retentionSeconds = Number(config?.workflowExecutionRetentionTtl?.seconds ?? 0);
  if (retentionSeconds < MIN_RETENTION_SECONDS) {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(MIN_RETENTION_SECONDS * 1000) },
    });
  }
}
