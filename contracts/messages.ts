import { defineQuery } from '@temporalio/workflow';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';

/** One message published through `POST /v1/messages`; its workflow ID is `messageWorkflowId(messageId)`. */
export interface PublishInput {
  messageId: string;
  eventType: string;
  payload: unknown;
  createdAt: string;
  endpointIds: string[];
  scheduleMs: number[];
}

export interface DeliveryInput {
  messageId: string;
  endpointId: string;
  eventType: string;
  payload: unknown;
  createdAt: string;
  /** Milliseconds to wait before each attempt; its length is the number of attempts. */
  scheduleMs: number[];
}

export interface DeliveryAttempt {
  messageId: string;
  endpointId: string;
  attempt: number;
  eventType: string;
  payload: unknown;
  createdAt: string;
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
