import { CancellationScope, condition, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import { coalesceTimes, turnDoneSignal, turnSignal, type EventFields, type Flow, type Turn, type WebhookEvent } from '../contracts';
import { dbActivity } from './activities';
import type { Progress } from './progress';

/** An event's place in its key's turns: what the entity answered, and where to say how the event ended. */
export interface HeldTurn {
  turn: Turn;
  key: string;
  entityId: string;
}

/**
 * Asks the key's entity for this event's turn and waits for it (`docs/entities.md`): signal-with-start
 * through an activity, then the entity's `turn` signal. An event whose body has no key runs alone.
 */
export async function takeTurn(event: WebhookEvent, flow: Flow, fields: EventFields, progress: Progress): Promise<HeldTurn | undefined> {
  const entity = flow.key!;
  const { key, version } = flow.entityOf(fields);
  if (key === undefined) return undefined;
  let turn: Turn | undefined;
  setHandler(turnSignal, (given) => void (turn ??= given));
  progress.entity = { flow: flow.name, source: event.source, key };
  progress.waitFor(`its turn on ${key} (${entity.order})`);
  const entityId = await dbActivity.requestTurn({
    flow: flow.name,
    source: event.source,
    key,
    order: entity.order,
    coalesce: coalesceTimes(entity),
    request: { eventId: event.id, workflowId: workflowInfo().workflowId, type: event.type, version, receivedAt: event.receivedAt },
  });
  await condition(() => turn !== undefined);
  progress.waitFor(null);
  progress.done('turn');
  return { turn: turn!, key, entityId };
}

/** Tells the entity how the event that had its turn ended: the next one may go, or the key waits on this failure. */
export async function endTurn(held: HeldTurn, eventId: string, failure: string | null): Promise<void> {
  await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(held.entityId).signal(turnDoneSignal, { eventId, failure }));
}
