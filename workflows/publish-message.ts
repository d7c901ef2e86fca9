import { ParentClosePolicy, setCurrentDetails, startChild, workflowInfo } from '@temporalio/workflow';
import { defineFlow, deliveryWorkflowId, type DeliveryInput, type PublishInput, type PublishResult } from '../contracts';
import { deliverMessage } from './deliver-message';

export const publishMessageFlow = defineFlow({
  workflow: publishMessage,
  description: 'One per message published through POST /v1/messages: one delivery per subscribed endpoint.',
  internal: true,
  versioning: { behavior: 'AUTO_UPGRADE', why: 'Waits for every delivery it started, as long as the slowest one retries (days).' },
});

/**
 * One per message published through `POST /v1/messages`; its workflow ID holds the message ID, which
 * derives from the API token and the Idempotency-Key, so Temporal refuses a second one. Starts one
 * delivery per subscribed endpoint and waits for them all.
 */
export async function publishMessage(input: PublishInput): Promise<PublishResult> {
  setCurrentDetails(`**Waiting for:** deliveries to ${input.endpointIds.length} endpoint(s), one child workflow each`);
  const deliveries = await Promise.all(
    input.endpointIds.map((endpointId) => {
      const { messageId, eventType, fingerprint, createdAt, payload, scheduleMs } = input;
      const delivery: DeliveryInput = { messageId, eventType, fingerprint, createdAt, payload, scheduleMs, endpointId };
      return startChild(deliverMessage, {
        workflowId: deliveryWorkflowId(workflowInfo().workflowId, endpointId),
        args: [delivery],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }),
  );
  return { messageId: input.messageId, deliveries: await Promise.all(deliveries.map((child) => child.result())) };
}
