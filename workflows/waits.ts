import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { eventArrivedSignal, type AwaitedEvent, type EventWait, type WaitingValues, type WaitState, type WebhookEvent } from '../contracts';
import { dbActivity } from './activities';
import type { Progress } from './progress';

/**
 * Waits for another event of the wait's source, or of the event's own
 * (docs/flows.md#wait-for-another-event): the first one of the wait's type whose match holds,
 * whether it was stored before the wait began or arrives while it lasts; undefined when the wait's
 * timeout passes first. `waiting` are the values the
 * match reads as `waiting.<name>`. Each wait of a workflow matches one event, once: a retry, a
 * reset or a redelivered event never matches it again.
 */
export async function waitForEvent(event: WebhookEvent, progress: Progress, wait: EventWait, waiting: WaitingValues): Promise<AwaitedEvent | undefined> {
  let arrived: AwaitedEvent | undefined;
  setHandler(eventArrivedSignal, ({ wait: name, ...awaited }) => {
    if (name === wait.name) arrived ??= awaited;
  });
  const { workflowId } = workflowInfo();
  const registered = await dbActivity.registerWaiter({ workflowId, source: wait.source ?? event.source, wait, waiting });
  let state: WaitState = registered;
  if ('waiting' in state) {
    const values = Object.entries(waiting).map(([name, value]) => `waiting.${name} = ${JSON.stringify(value)}`);
    progress.waitFor(`${wait.type} where ${wait.match} (${values.join(', ')})`, { signals: [], until: registered.until });
    if (await condition(() => arrived !== undefined, Math.max(1, registered.remainingMs))) state = { matched: arrived! };
    else state = await dbActivity.closeWaiter({ workflowId, wait: wait.name });
    progress.waitFor(null);
  }
  return 'matched' in state ? state.matched : undefined;
}
