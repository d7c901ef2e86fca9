import { defineQuery } from '@temporalio/workflow';

/** One message published through `POST /v1/messages`; its workflow ID is the message ID. */
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

/** The child workflow delivering a message to one endpoint. */
export const deliveryWorkflowId = (messageId: string, endpointId: string) => `${messageId}:${endpointId}`;

/** A fresh delivery started by an operator, beside the first one; `nonce` keeps each one apart. */
export const redeliveryWorkflowId = (messageId: string, endpointId: string, nonce: string) => `${deliveryWorkflowId(messageId, endpointId)}:redeliver-${nonce}`;
