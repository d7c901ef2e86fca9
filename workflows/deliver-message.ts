import { proxyActivities, setCurrentDetails, setHandler, sleep } from '@temporalio/workflow';
import { defineFlow, deliveryStateQuery, type Activities, type DeliveryInput, type DeliveryState } from '../contracts';

export const deliverMessageFlow = defineFlow({
  workflow: deliverMessage,
  description: 'One message to one endpoint, attempted on the delivery schedule until it is taken.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Sleeps on the delivery schedule for up to days between attempts; each attempt runs on the build current then.',
  },
  queries: [deliveryStateQuery],
});

/** Each attempt is one activity; the schedule between attempts is the workflow's own durable timers. */
const { attemptDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/**
 * One message to one endpoint: attempts on the schedule (by default immediately, 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h) until a 2xx, a 410 (the endpoint is disabled), or the last attempt.
 */
export async function deliverMessage(input: DeliveryInput): Promise<DeliveryState> {
  const state: DeliveryState = { endpointId: input.endpointId, status: 'delivering', attempts: 0, lastOutcome: null };
  setHandler(deliveryStateQuery, () => state);

  const show = (doing: string) =>
    setCurrentDetails(
      `**Attempts:** ${state.attempts} of ${input.scheduleMs.length}${state.lastOutcome ? ` · last: ${state.lastOutcome.result}` : ''}\n\n**Now:** ${doing}`,
    );
  for (const delayMs of input.scheduleMs) {
    if (delayMs > 0) {
      show(`waiting ${Math.round(delayMs / 1000)} s before attempt ${state.attempts + 1}`);
      await sleep(delayMs);
    }
    state.attempts++;
    show(`attempt ${state.attempts}`);
    const { messageId, endpointId, eventType, fingerprint, createdAt, payload } = input;
    state.lastOutcome = await attemptDelivery({ messageId, endpointId, eventType, fingerprint, createdAt, payload, attempt: state.attempts });
    if (state.lastOutcome.result !== 'failed') {
      state.status = state.lastOutcome.result;
      show(state.status);
      return state;
    }
  }
  state.status = 'failed';
  show('failed: no attempt left');
  return state;
}
