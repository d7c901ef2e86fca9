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

/** An event's place in its key's turns: what it was answered, and where to say how the event ended. */
export interface HeldTurn {
  turn: Turn;
  key: string;
  entityId: string;
  /** Asked through `askTurn`, so the ending goes through `endTurn`; false in histories from before. */
  byActivity: boolean;
  /** The ask of an event that held its key itself (no entity gave it its turn): its ending lets the key go. */
  holding?: TurnAsk;
}

/** The patch that asks through the `askTurn` activity; histories without its marker replay the signal-with-start before it. */
const TURN_BY_UPDATE = 'entity-turn-by-update';

/**
 * Asks for this event's turn (`docs/entities.md`) through a local activity: the event holds its key
 * itself when the key is free, and goes at once (or ends, superseded); otherwise it waits in the
 * key's entity for its `turn` signal. An event whose body has no key runs alone.
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
  const byActivity = patched(TURN_BY_UPDATE);
  let entityId: string;
  let holding: TurnAsk | undefined;
  if (byActivity) {
    const asked = await dbActivity.askTurn(ask);
    entityId = asked.entityId;
    if (asked.held && turn === undefined) holding = ask;
    turn ??= asked.turn ?? undefined;
  } else {
    entityId = await dbActivity.requestTurn(ask);
  }
  if (turn === undefined) await condition(() => turn !== undefined);
  progress.waitFor(null);
  progress.done('turn');
  return { turn: turn!, key, entityId, byActivity, holding };
}

/**
 * Says how the event that had its turn ended: the key's next event may go, or the key waits on this
 * failure. An event that held its key lets it go; one the entity gave its turn tells the entity. By
 * a local activity, so the event completes in the same workflow task.
 */
export async function endTurn(held: HeldTurn, eventId: string, failure: string | null): Promise<void> {
  const done = { eventId, failure };
  await CancellationScope.nonCancellable(() =>
    held.byActivity
      ? dbActivity.endTurn({ entityId: held.entityId, done, held: held.holding })
      : getExternalWorkflowHandle(held.entityId).signal(turnDoneSignal, done),
  );
}
