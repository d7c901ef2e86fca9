import { ParentClosePolicy, startChild, TemporalFailure, workflowInfo } from '@temporalio/workflow';
import { defineFlow, subscriberEvent, subscriberWorkflowId, WEBHOOK_TENANT, type EventOutcome, type RoutedFlow, type WebhookEvent } from '../contracts';
import { finish, handleEvent } from './event-frame';

export const routeEventFlow = defineFlow({
  workflow: routeEvent,
  description:
    'An event a route with several flows or a filter took: starts each flow it chose as a subscriber of its own (<event>~<flow>), and records which, and which filters could not decide.',
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'A claim, one start per flow and a record: seconds; whichever build is current finishes it.',
  },
});

/**
 * The event's own workflow (its ID the provider's event ID, the engine's dedupe) when its route
 * chose flows by filter or several at once: it starts each as a workflow of its own, whose ID is
 * derived from the event's and the flow's name, and does not wait for them. Each then fails,
 * retries, is reset and is replayed alone; a reset of this workflow starts none again, because
 * each ID is taken already.
 */
export async function routeEvent(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const { flows, filtered, failures } = event.routes ?? { flows: [], filtered: [], failures: [] };
    const routed: Array<{ flow: string; workflowId: string }> = [];
    for (const route of flows) {
      routed.push({ flow: route.flow, workflowId: await startSubscriber(event, route) });
      progress.done(`start ${route.flow}`);
    }
    return finish(event, progress, failures.length > 0 ? 'routed, with failed filters' : 'routed', {
      status: 'completed',
      detail: { routed, filtered, failures },
    });
  });
}

/** Starts one subscriber, or finds it started (a reset of the event, or a start whose answer was lost); its workflow ID either way. */
async function startSubscriber(event: WebhookEvent, route: RoutedFlow): Promise<string> {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  const childId = subscriberWorkflowId(workflowId, route.flow);
  try {
    await startChild(route.flow, {
      workflowId: childId,
      args: [subscriberEvent(event, route)],
      // It lives on its own: this workflow completes once every subscriber has started.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        ...typedSearchAttributes.getAll().filter((pair) => pair.key.name !== WEBHOOK_TENANT.name),
        ...(route.tenant !== undefined ? [{ key: WEBHOOK_TENANT, value: route.tenant }] : []),
      ],
      staticSummary: route.summary,
      ...(route.tenant !== undefined && { priority: { fairnessKey: route.tenant } }),
    });
  } catch (error) {
    // The class is @temporalio/common's, which workflow code does not import; its name is the SDK's marker.
    if (!(error instanceof TemporalFailure && error.name === 'WorkflowExecutionAlreadyStartedError')) throw error;
  }
  return childId;
}
