import { setTimeout as delay } from 'node:timers/promises';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import { SEARCH_ATTRIBUTES } from '../../contracts';

const { IndexedValueType } = temporal.api.enums.v1;
/** How the server indexes each type our attributes use. */
const INDEXED_VALUE_TYPES: Record<(typeof SEARCH_ATTRIBUTES)[number]['type'], temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** Stripe retries a failed delivery for up to 3 days; keep closed runs (and so engine dedupe) longer. */
export const MIN_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/**
 * Registers the namespace when it is missing (a fresh cluster has none), registers our search
 * attributes, and raises the namespace's retention to at least 7 days. Resolves once the namespace
 * answers visibility queries on those attributes. Safe to run on every start, against the dev
 * server or any self-hosted cluster.
 */
export async function prepareNamespace(connection: Connection, namespace: string, { timeoutMs = 60_000 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await registerIfMissing(connection, namespace);
  // A cluster's frontend learns of a new namespace and new attributes from its caches, a few seconds
  // later; until then calls fail as if they did not exist, so each step is retried until the deadline.
  await untilReady(deadline, `Namespace "${namespace}"`, async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((key) => !customAttributes?.[key.name]);
    if (missing.length > 0) {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: indexedTypes(missing),
      });
    }
  });

  const { config } = await connection.workflowService.describeNamespace({ namespace });
  const retentionSeconds = Number(config?.workflowExecutionRetentionTtl?.seconds ?? 0);
  if (retentionSeconds < MIN_RETENTION_SECONDS) {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: { seconds: Long.fromNumber(MIN_RETENTION_SECONDS) } },
    });
  }

  const probe = SEARCH_ATTRIBUTES.map((key) => `${key.name} = 'probe'`).join(' AND ');
  await untilReady(deadline, `Namespace "${namespace}"`, () => connection.workflowService.countWorkflowExecutions({ namespace, query: probe }));
}

/** Our search attributes as `addSearchAttributes` takes them: name → how the server indexes it. */
export function indexedTypes(keys: readonly (typeof SEARCH_ATTRIBUTES)[number][] = SEARCH_ATTRIBUTES): Record<string, temporal.api.enums.v1.IndexedValueType> {
  return Object.fromEntries(keys.map((key) => [key.name, INDEXED_VALUE_TYPES[key.type]]));
}

async function untilReady(deadline: number, what: string, step: () => Promise<unknown>): Promise<void> {
  for (;;) {
    try {
      await step();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} is not ready for our search attributes: ${(error as Error).message}`, { cause: error });
      await delay(500);
    }
  }
}

async function registerIfMissing(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if ((error as { code?: number }).code !== grpcStatus.NOT_FOUND) throw error;
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(MIN_RETENTION_SECONDS) } });
    } catch (registerError) {
      // Another process (a second worker, `durable-webhooks setup`) registered it first.
      if ((registerError as { code?: number }).code !== grpcStatus.ALREADY_EXISTS) throw registerError;
    }
  }
}
