import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { deliverMessage, type DeliveryInput, type DeliveryState } from './deliver-message';

export interface PublishInput {
  messageId: string;
  eventType: string;
  payload: unknown;
  createdAt: string;
  endpointIds: string[];
  scheduleMs: number[];
}

/** The child workflow delivering a message to one endpoint. */
export const deliveryWorkflowId = (messageId: string, endpointId: string) => `${messageId}:${endpointId}`;

/**
 * One per message published through `POST /v1/messages`; its workflow ID is the message ID, which
 * derives from the API token and the Idempotency-Key, so Temporal refuses a second one. Starts one
 * delivery per subscribed endpoint and waits for them all.
 */
export async function publishMessage(input: PublishInput): Promise<{ messageId: string; deliveries: DeliveryState[] }> {
  const deliveries = await Promise.all(
    input.endpointIds.map((endpointId) => {
      const delivery: DeliveryInput = { ...input, endpointId };
      return startChild(deliverMessage, {
        workflowId: deliveryWorkflowId(input.messageId, endpointId),
        args: [delivery],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }),
  );
  return { messageId: input.messageId, deliveries: await Promise.all(deliveries.map((child) => child.result())) };
}
