import { CancellationScope, condition, getExternalWorkflowHandle, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  coalesceTimes,
  ledgerEventId,
  turnDoneSignal,
  turnSignal,
  type EventFields,
  type Flow,
  type Turn,
  type TurnAsk,
  type WebhookEvent,
} from '../contracts';
import { dbActivity } from './activities';
import type { Progress } from './progress';

/** An event's place in its key's turns: what the entity answered, and where to say how the event ended. */
export interface HeldTurn {
  turn: Turn;
  key: string;
  entityId: string;
  /** Asked by update (`askTurn`), so the ending goes the same way; false in histories from before. */
  byUpdate: boolean;
}

/** The patch that asks for the turn by update-with-start; histories without its marker replay the signal-with-start before it. */
const TURN_BY_UPDATE = 'entity-turn-by-update';

/**
 * Asks the key's entity for this event's turn (`docs/entities.md`): update-with-start through a
 * local activity, which the entity answers at once with the turn when the key is free; otherwise
 * the event waits for the entity's `turn` signal. An event whose body has no key runs alone.
 */
export async function takeTurn(event: WebhookEvent, flow: Flow, fields: EventFields, progress: Progress): Promise<HeldTurn | undefined> {
  const entity = flow.key!;
  const { key, version } = flow.entityOf(fields);
  if (key === undefined) return undefined;
  let turn: Turn | undefined;
  setHandler(turnSignal, (given) => void (turn ??= given));
  progress.entity = { flow: flow.name, source: event.source, key };
  progress.waitFor(`its turn on ${key} (${entity.order})`);
  const ask: TurnAsk = {
    flow: flow.name,
    source: event.source,
    key,
    order: entity.order,
    coalesce: coalesceTimes(entity),
    request: { eventId: event.id, workflowId: workflowInfo().workflowId, type: event.type, version, receivedAt: event.receivedAt },
    ledgerEventId: ledgerEventId(event),
  };
  const byUpdate = patched(TURN_BY_UPDATE);
  let entityId: string;
  if (byUpdate) {
    const asked = await dbActivity.askTurn(ask);
    entityId = asked.entityId;
    turn ??= asked.turn ?? undefined;
  } else {
    entityId = await dbActivity.requestTurn(ask);
  }
  if (turn === undefined) await condition(() => turn !== undefined);
  progress.waitFor(null);
  progress.done('turn');
  return { turn: turn!, key, entityId, byUpdate };
}

/**
 * Tells the entity how the event that had its turn ended: the next one may go, or the key waits on
 * this failure. By a local activity's signal, so the event completes in the same workflow task.
 */
export async function endTurn(held: HeldTurn, eventId: string, failure: string | null): Promise<void> {
  const done = { eventId, failure };
  await CancellationScope.nonCancellable(() =>
    held.byUpdate ? dbActivity.endTurn({ entityId: held.entityId, done }) : getExternalWorkflowHandle(held.entityId).signal(turnDoneSignal, done),
  );
}
