import { defineQuery } from '@temporalio/workflow';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';

/**
 * Where a message's payload is: stored once in the database (`message_payloads`), found by the
 * message ID and the request body's fingerprint. Workflows carry this, never the payload, so a
 * message to many endpoints stays small in Temporal whatever its size.
 */
export interface PayloadRef {
  messageId: string;
  eventType: string;
  /** SHA-256 of the request body: which stored body this message is. */
  fingerprint: string;
  createdAt: string;
  /** The payload itself, only in messages published before payloads were stored (still in flight across an upgrade). */
  payload?: unknown;
}

/** One message published through `POST /v1/messages`; its workflow ID is `messageWorkflowId(messageId)`. */
export interface PublishInput extends PayloadRef {
  endpointIds: string[];
  scheduleMs: number[];
}

export interface DeliveryInput extends PayloadRef {
  endpointId: string;
  /** Milliseconds to wait before each attempt; its length is the number of attempts. */
  scheduleMs: number[];
}

export interface DeliveryAttempt extends PayloadRef {
  endpointId: string;
  attempt: number;
}

export type DeliveryOutcome =
  | { result: 'delivered'; statusCode: number }
  | { result: 'failed'; statusCode: number | null; error: string }
  | { result: 'gone' | 'endpoint_disabled' | 'endpoint_deleted' };

export interface DeliveryState {
  endpointId: string;
  status: 'delivering' | 'delivered' | 'failed' | 'gone' | 'endpoint_disabled' | 'endpoint_deleted';
  attempts: number;
  lastOutcome: DeliveryOutcome | null;
}

export interface PublishResult {
  messageId: string;
  deliveries: DeliveryState[];
}

export const deliveryStateQuery = defineQuery<DeliveryState>('status');

/** The workflow that publishes a message: its memo is the message's receipt. */
export const messageWorkflowId = (messageId: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}${messageId}`;

/**
 * The child workflow delivering a message to one endpoint, named after its parent's workflow ID
 * (`messageWorkflowId(messageId)`): a publish that began under an older ID form replays unchanged.
 */
export const deliveryWorkflowId = (messageWorkflowId: string, endpointId: string) => `${messageWorkflowId}:${endpointId}`;

/** A fresh delivery started by an operator, beside the first one; `nonce` keeps each one apart. */
export const redeliveryWorkflowId = (messageId: string, endpointId: string, nonce: string) =>
  `${deliveryWorkflowId(messageWorkflowId(messageId), endpointId)}:redeliver-${nonce}`;
