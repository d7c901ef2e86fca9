import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { deliveryStateQuery, deliveryWorkflowId, messageWorkflowId, redeliveryWorkflowId, type DeliveryInput, type PublishInput } from '../../contracts';
import { deliverMessageFlow, publishMessageFlow } from '../flows';
import type { Database } from '../db/database';
import { attemptsOf } from '../db/delivery-attempts';
import { subscribedEndpoints } from '../db/endpoints';
import { IdempotencyConflictError, IdempotencyKeyReusedError, MessageDeliveringError, ResourceNotFoundError, UndeliverableMessageError } from '../core/errors';
import { erasePayload, erasureOfMessage, storePayload, type MessageErasure } from '../db/messages';
import { isLosslessNumber, stringify as stringifyLossless } from 'lossless-json';

/** What `POST /v1/messages` answers, the first time and on every replay. */
export interface Receipt {
  id: string;
  eventType: string;
  createdAt: string;
  endpoints: string[];
}

interface MessageMemo {
  scope: string;
  fingerprint: string;
  receipt: Receipt;
}

/** The message ID, and its workflow ID: the same token and key always give the same one. */
export const messageIdFor = (scope: string, idempotencyKey: string) =>
  `msg_${createHash('sha256').update(`${scope}\n${idempotencyKey}`).digest('hex').slice(0, 24)}`;

/**
 * A fingerprint of the request body as canonical JSON (keys sorted), so key order does not matter.
 * Numbers count as written (the body is parsed losslessly), so bodies that differ only beyond
 * 2^53 are different requests.
 */
export function fingerprintOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (isLosslessNumber(value)) return value.toString();
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A message goes to at most this many endpoints: its workflow starts one delivery per endpoint,
 * and Temporal allows a workflow 2,000 pending children. Beyond it the publish is refused (422).
 */
export const MAX_ENDPOINTS_PER_MESSAGE = 1000;

export interface MessageServiceOptions {
  taskQueue: string;
  scheduleMs: number[];
  /** How long a repeat waits for the first request with its key before answering 409. @default 10_000 */
  inFlightWaitMs?: number;
}

/**
 * Publishing with Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): the message's
 * workflow ID derives from the token scope and the key, so Temporal itself refuses a second message,
 * and the workflow's memo keeps the body's fingerprint and the receipt for replays. Keys are honoured
 * while Temporal keeps the message workflow: its deliveries, then the namespace retention.
 */
export class MessageService {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: Client,
    private readonly db: Database,
    private readonly options: MessageServiceOptions,
  ) {}

  /** `body.payload` is the lossless parse of the request (`lossless-json`), so it is stored and sent as written. */
  async publish(scope: string, idempotencyKey: string, body: { eventType: string; payload: unknown }): Promise<{ replayed: boolean; receipt: Receipt }> {
    const messageId = messageIdFor(scope, idempotencyKey);
    const fingerprint = fingerprintOf(body);
    const first = this.inFlight.get(messageId);
    if (first) {
      const settled = await settlement(first, this.options.inFlightWaitMs ?? 10_000);
      if (settled !== 'fulfilled') throw new IdempotencyConflictError({ idempotencyKey: idempotencyKey, firstFailed: settled === 'rejected' });
      return this.replay(scope, idempotencyKey, messageId, fingerprint);
    }
    const attempt = this.record(scope, idempotencyKey, messageId, fingerprint, body);
    this.inFlight.set(messageId, attempt);
    try {
      return await attempt;
    } finally {
      this.inFlight.delete(messageId);
    }
  }

  /** The receipt, for each endpoint its delivery status and attempts, and the payload's erasure (null while stored). */
  async view(scope: string, messageId: string) {
    const { memo } = await this.scoped(scope, messageId);
    const attempts = await attemptsOf(this.db, messageId);
    const deliveries = await Promise.all(
      memo.receipt.endpoints.map(async (endpointId) => {
        const state = await this.client.workflow
          .getHandle(deliveryWorkflowId(messageWorkflowId(messageId), endpointId))
          .query(deliveryStateQuery)
          .catch(() => null);
        return {
          endpointId,
          status: state?.status ?? 'unknown',
          attempts: attempts.filter((attempt) => attempt.endpointId === endpointId).map(({ endpointId: _endpoint, ...attempt }) => attempt),
        };
      }),
    );
    return { ...memo.receipt, deliveries, erasure: (await erasureOfMessage(this.db, messageId)) ?? null };
  }

  /**
   * Removes the message's payload from the database (`message_payloads`), where its deliveries read
   * it; Temporal never held it. Refused while deliveries run (they would fail without it).
   */
  async erase(scope: string, messageId: string, reason: string): Promise<MessageErasure & { id: string; erasedNow: boolean }> {
    const { running } = await this.scoped(scope, messageId);
    if (running) throw new MessageDeliveringError(`Message ${messageId} is still being delivered: erase it once its deliveries have ended.`);
    const erasure = await erasePayload(this.db, messageId, reason);
    if (!erasure) throw new ResourceNotFoundError('message', messageId);
    return { id: messageId, ...erasure };
  }

  /** The message's memo and whether it still delivers, if it belongs to this scope; 404 for others, as for no message at all. */
  private async scoped(scope: string, messageId: string): Promise<{ memo: MessageMemo; running: boolean }> {
    const message = await this.described(messageId).catch((error: unknown) => {
      if (error instanceof ResourceNotFoundError) return undefined;
      throw error;
    });
    if (!message || message.memo.scope !== scope) throw new ResourceNotFoundError('message', messageId);
    return message;
  }

  private async record(scope: string, idempotencyKey: string, messageId: string, fingerprint: string, body: { eventType: string; payload: unknown }) {
    const receipt: Receipt = {
      id: messageId,
      eventType: body.eventType,
      createdAt: new Date().toISOString(),
      endpoints: await subscribedEndpoints(this.db, scope, body.eventType),
    };
    if (receipt.endpoints.length > MAX_ENDPOINTS_PER_MESSAGE) {
      throw new UndeliverableMessageError(
        `${receipt.endpoints.length} endpoints subscribe to ${body.eventType}; a message goes to at most ${MAX_ENDPOINTS_PER_MESSAGE}. Narrow the endpoints' eventTypes.`,
      );
    }
    // The payload is stored before the workflow starts, so every delivery finds it.
    await storePayload(this.db, { id: messageId, fingerprint, scope, eventType: body.eventType, payloadJson: stringifyLossless(body.payload)! });
    const input: PublishInput = {
      messageId,
      eventType: body.eventType,
      fingerprint,
      createdAt: receipt.createdAt,
      endpointIds: receipt.endpoints,
      scheduleMs: this.options.scheduleMs,
    };
    try {
      await this.client.workflow.start(publishMessageFlow.workflow, {
        workflowId: messageWorkflowId(messageId),
        taskQueue: this.options.taskQueue,
        args: [input],
        memo: { scope, fingerprint, receipt } satisfies MessageMemo,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        staticSummary: `api · ${body.eventType} · ${receipt.endpoints.length} endpoint(s)`,
      });
      return { replayed: false, receipt };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return this.replay(scope, idempotencyKey, messageId, fingerprint);
      throw error;
    }
  }

  private async replay(scope: string, idempotencyKey: string, messageId: string, fingerprint: string) {
    const { memo } = await this.described(messageId);
    if (memo.scope !== scope || memo.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError({ idempotencyKey: idempotencyKey });
    return { replayed: true, receipt: memo.receipt };
  }

  /** The message workflow's memo, and whether it still runs (one describe call). */
  private async described(messageId: string): Promise<{ memo: MessageMemo; running: boolean }> {
    try {
      const { memo, status } = await this.client.workflow.getHandle(messageWorkflowId(messageId)).describe();
      return { memo: memo as unknown as MessageMemo, running: status.name === 'RUNNING' };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ResourceNotFoundError('message', messageId);
      throw error;
    }
  }
}

/**
 * A fresh delivery of a published message (to one of its endpoints, or all of them), on the full
 * schedule again, under a new workflow ID. The message itself comes from its workflow's input.
 * @returns the new delivery workflow IDs
 */
export async function redeliverMessage(
  client: Client,
  options: { taskQueue: string; scheduleMs: number[] },
  messageId: string,
  endpointId?: string,
): Promise<string[]> {
  const handle = client.workflow.getHandle(messageWorkflowId(messageId));
  let memo: MessageMemo;
  try {
    memo = (await handle.describe()).memo as unknown as MessageMemo;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new ResourceNotFoundError('message', messageId);
    throw error;
  }
  if (endpointId && !memo.receipt.endpoints.includes(endpointId)) throw new ResourceNotFoundError('endpoint', `${endpointId} for message ${messageId}`);
  const { events } = await handle.fetchHistory();
  const input = defaultPayloadConverter.fromPayload<PublishInput>(events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!);
  return Promise.all(
    (endpointId ? [endpointId] : memo.receipt.endpoints).map(async (id) => {
      const workflowId = redeliveryWorkflowId(messageId, id, randomUUID().slice(0, 8));
      const { eventType, fingerprint, createdAt, payload } = input;
      const delivery: DeliveryInput = { messageId, eventType, fingerprint, createdAt, payload, endpointId: id, scheduleMs: options.scheduleMs };
      await client.workflow.start(deliverMessageFlow.workflow, {
        workflowId,
        taskQueue: options.taskQueue,
        args: [delivery],
        staticSummary: `redeliver ${messageId} to ${id}`,
      });
      return workflowId;
    }),
  );
}

/** How the promise settles within `ms`: `pending` when it has not by then. */
function settlement(promise: Promise<unknown>, ms: number): Promise<'fulfilled' | 'rejected' | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  return Promise.race([
    promise.then(
      () => 'fulfilled' as const,
      () => 'rejected' as const,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}
