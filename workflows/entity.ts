import { condition, continueAsNew, patched, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  askTurnUpdate,
  CARRIED_REQUESTS,
  defineFlow,
  entityActionSignal,
  entityStateQuery,
  keyGivenSignal,
  nextTurns,
  requestTurnSignal,
  turnDoneSignal,
  type EntityAction,
  type EntityInput,
  type EntityState,
  type Turn,
  type TurnAnswer,
  type TurnDone,
  type TurnRequest,
} from '../contracts';
import { dbActivity, recordedDbActivity } from './activities';
import { answering } from './entity-answers';
import { waitingBeyondCarry } from './entity-waiting';
import { workflowTime } from './format';

export const keyEntityFlow = defineFlow({
  workflow: keyEntity,
  description: "One per keyed flow, source and key: gives the key's events their turns, one at a time, in version order.",
  internal: true,
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Lives as long as its key is busy (continue-as-new keeps its history short), so it can only ever run on the current build.',
  },
  queries: [entityStateQuery],
});

/** How long an entity with nothing waiting stays open before it completes; the next event starts it again. */
const IDLE_TIMEOUT = '1 hour';
/** How often the entity looks whether the running event's workflow still exists (one terminated never says how it ended). */
const RUNNING_CHECK = '10 minutes';
/** Continue-as-new well before Temporal's limits (51,200 events, 50 MiB), whatever the server suggests. */
const HISTORY_BOUND = 10_000;
/** The workflow task's time, in milliseconds. */
const now = () => workflowTime().getTime();
/** The patch from which the entity holds its key in the database while it gives turns, and lets it go when idle. */
const KEY_IN_DATABASE = 'entity-key-in-database';
/**
 * The patch for a hot key: every wait ends when continue-as-new is due, so signals cannot pile up in
 * one run while an event runs; and the event given its turn goes to the entity's task priority.
 */
const HOT_KEY = 'entity-hot-key';
/**
 * The patch from which the entity lets its key go by an activity, not a local one: a local
 * activity's result was lost with the task the server refused as the entity completed (an event's
 * request had come in), and the retried task gave that event its turn believing it still held the
 * key, while another event could hold the free key and run beside it.
 */
const FREE_KEY_RECORDED = 'entity-free-key-recorded';
/**
 * The patch from which a run carries at most `carry` waiting requests: a `serial` key keeps its
 * newest in the database and takes them back as its turns reach them, a `latest` or `coalesce` key
 * supersedes every one but the newest at once. Before it, a run carried every request, and a
 * continue-as-new past about 10,000 of them passed Temporal's 2 MiB input limit.
 */
const WAITING_IN_DATABASE = 'entity-waiting-in-database';

/**
 * The turns of one key (`durable-webhooks:entity:<flow>:<source>:<key>`) while the key is busy: an
 * event of a free key holds the key itself and runs with no entity; one that comes while the key is
 * held, parked or coalescing starts the entity by signal-with-start (docs/entities.md). The entity
 * takes the key (at once, or once its holder hands it over) before it gives a turn, and lets it go
 * when nothing is left. One event runs at a time; the next is the oldest version waiting (`serial`)
 * or the newest, every older one superseded (`latest`, and `coalesce` once a burst has gathered: the
 * key quiet for its quiet time, or its ceiling reached). An event that fails parks the key until an
 * operator skips or retries it (`durable-webhooks entities skip|retry`); other keys run on.
 * Everything it knows is carried across continue-as-new and kept in the database.
 */
export async function keyEntity(input: EntityInput): Promise<EntityState> {
  const state: EntityState = {
    flow: input.flow,
    source: input.source,
    key: input.key,
    order: input.order,
    coalesce: input.coalesce ?? null,
    burst: input.burst ?? null,
    last: input.last ?? null,
    pending: input.pending ?? [],
    running: input.running ?? null,
    parked: input.parked ?? null,
    applied: input.applied ?? 0,
    superseded: input.superseded ?? 0,
    holdsKey: input.holdsKey ?? false,
    carry: input.carry ?? CARRIED_REQUESTS,
    stored: input.stored ?? null,
  };
  // Histories from before the key was held in the database give turns without it, and wait an hour when idle.
  const keyInDatabase = patched(KEY_IN_DATABASE);
  // Histories from before wait for the running event, a hand-over or an operator however long their
  // run grows, and give a turn with no change of priority.
  const hotKey = patched(HOT_KEY);
  // Histories from before let the key go by a local activity.
  const freeKeyRecorded = patched(FREE_KEY_RECORDED);
  // Histories from before carry every request across continue-as-new.
  const carryBounded = patched(WAITING_IN_DATABASE);
  // Histories from before signal each answer from the entity.
  const answer = answering(state.carry);
  const ref = { flow: state.flow, source: state.source, key: state.key };
  // Answered from the start, while the read below runs too (the console shows a key just handed over).
  setHandler(entityStateQuery, () => state);
  // A new entity started without what the database kept of the key (its starters pass it, and so
  // does a continue-as-new; a repeated hand-over and histories from before do not) reads it first.
  if (input.last === undefined) Object.assign(state, await dbActivity.readEntity(ref));
  const ended = new Map<string, TurnDone>();
  const actions: EntityAction[] = [];
  /** The running event asked again (a reset of its workflow): it gets its turn again. */
  let askedAgain = false;
  /** How often the key's holder has handed it over (`keyGiven`): the entity takes it then. */
  let given = 0;

  /** How many requests wait for their turn: in the run, and kept in the database. */
  const waiting = () => state.pending.length + (state.stored?.count ?? 0);

  /** A request for a turn joins those waiting, unless it is already waiting or parked. */
  const wait = (request: TurnRequest) => {
    if (state.pending.some((waiting) => waiting.eventId === request.eventId) || state.parked?.eventId === request.eventId) return;
    state.pending.push(request);
    if (state.coalesce) state.burst = { since: state.burst?.since ?? now(), latest: now() };
  };
  setHandler(requestTurnSignal, (request) => {
    if (state.running?.eventId === request.eventId) askedAgain = true;
    else wait(request);
  });
  /**
   * An event's request by update, as events asked before a free key was held with no entity (their
   * histories replay through it): a free key answered with the turn at once; any other waits, and
   * its turn comes as a signal. The running event asking again gets its turn again.
   */
  setHandler(askTurnUpdate, (request): TurnAnswer => {
    if (state.running?.eventId === request.eventId) return { go: true, after: state.last };
    if (keyInDatabase || state.running || state.parked || state.coalesce || state.pending.length > 0) {
      wait(request);
      return null;
    }
    const { go, superseded } = nextTurns(state.order, [request], state.last);
    state.running = go;
    state.superseded += superseded.length;
    return go ? { go: true, after: state.last } : { go: false, after: superseded[0]!.after };
  });
  /** How long a coalescing key's burst still gathers: until the key is quiet, or the ceiling since its first event. */
  const gathering = () =>
    state.coalesce && state.burst ? Math.min(state.burst.latest + state.coalesce.quiet, state.burst.since + state.coalesce.ceiling) - now() : 0;
  setHandler(turnDoneSignal, (done) => void ended.set(done.eventId, done));
  setHandler(keyGivenSignal, () => void given++);
  // An action for a key that waits on nothing has nothing to act on (the operations refuse it first).
  setHandler(entityActionSignal, (action) => void (state.parked && actions.push(action)));

  const show = () =>
    setCurrentDetails(
      [
        `**Key:** ${state.key} (${state.order}) · **last applied:** ${state.last?.eventId ?? 'none'} · **applied:** ${state.applied} · **superseded:** ${state.superseded}`,
        state.parked
          ? `**Parked on:** ${state.parked.eventId}: ${state.parked.failure}. Waiting for an operator: durable-webhooks entities skip|retry`
          : `**Running:** ${state.running?.eventId ?? 'nothing'} · **waiting:** ${waiting()}`,
      ].join('\n\n'),
    );

  /**
   * Whether this run should end in continue-as-new: the server suggests it, or its history passed our
   * bound. Each event's request is a signal, and Temporal refuses any past 10,000 in one run, so a
   * busy key must go on in a new run even while it waits.
   */
  const continueAsNewDue = () => {
    const { continueAsNewSuggested, historyLength } = workflowInfo();
    return continueAsNewSuggested || historyLength > HISTORY_BOUND;
  };
  /** Whether the run carries more requests than it may (from the patch on): it stores or supersedes the rest first. */
  const overflowing = () => carryBounded && state.pending.length > state.carry;
  /** Every wait below also ends when continue-as-new is due (from the patch on), or the run carries too many requests, and goes to it. */
  const due = () => (hotKey && continueAsNewDue()) || overflowing();

  /** Whether the entity needs its key: to give a turn, while its event runs, or while the key waits on a failed event. */
  const needsKey = () => state.running !== null || state.parked !== null || (waiting() > 0 && gathering() <= 0);

  const { carryNoMore, nextIsStored, takeBack } = waitingBeyondCarry(state, answer);

  for (;;) {
    show();
    if (keyInDatabase && !state.holdsKey && needsKey()) {
      const before = given;
      const taken = await dbActivity.takeKey(ref);
      // What the key's previous holder applied, or parked on, is where the entity goes on from.
      if (taken.held) Object.assign(state, { holdsKey: true, last: taken.last, parked: taken.parked ?? state.parked });
      else if (!(await condition(() => given > before || due(), RUNNING_CHECK)) && !(await dbActivity.eventWorkflowOpen(taken.holder.workflowId))) {
        // Its holder's workflow ended without letting the key go (terminated): the entity takes the
        // key, and the key waits on that event as on any that failed.
        const forced = await dbActivity.takeKey({ ...ref, from: taken.holder.workflowId });
        if (forced.held) {
          Object.assign(state, { holdsKey: true, last: forced.last });
          state.parked = { ...taken.holder, failure: 'its workflow ended without letting its key go (terminated?)' };
          await dbActivity.recordEntity({ ...ref, parked: state.parked });
        }
      }
    } else if (state.parked) {
      await condition(() => actions.length > 0 || due());
      const action = actions.shift();
      // A second action sent while the first was on its way has nothing left to act on (and would keep the run from going on).
      if (hotKey) actions.length = 0;
      if (action) {
        if (action.action === 'retry') state.running = state.parked;
        state.parked = null;
        await dbActivity.recordEntity({ ...ref, parked: null });
      }
    } else if (state.running) {
      const running = state.running;
      if (askedAgain) {
        askedAgain = false;
        await answer([[running, { go: true, after: state.last }]]);
      }
      if (!(await condition(() => ended.has(running.eventId) || askedAgain || due(), RUNNING_CHECK))) {
        if (!(await dbActivity.eventWorkflowOpen(running.workflowId)))
          ended.set(running.eventId, { eventId: running.eventId, failure: 'its workflow ended without saying how (terminated?)' });
      }
      const done = ended.get(running.eventId);
      if (done) {
        ended.delete(running.eventId);
        state.running = null;
        if (done.failure === null) {
          state.last = { eventId: running.eventId, version: running.version };
          state.applied++;
          await dbActivity.recordEntity({ ...ref, applied: state.last, receivedAt: running.receivedAt });
        } else {
          state.parked = { ...running, failure: done.failure };
          await dbActivity.recordEntity({ ...ref, parked: state.parked });
        }
      } else if (!hotKey) continue;
    } else if (state.pending.length > 0 && gathering() > 0) {
      const { latest } = state.burst!;
      await condition(() => state.burst!.latest !== latest || due(), gathering());
    } else if (carryBounded && nextIsStored()) {
      await takeBack();
    } else if (state.pending.length > 0) {
      const { go, superseded, waiting: left } = nextTurns(state.order, state.pending, state.last);
      state.pending = left;
      state.burst = null;
      state.superseded += superseded.length;
      // Running before its turn is given, so that it asking again meanwhile is not taken for a new request.
      state.running = go;
      // Every event waiting on the key waits for this one: its tasks go before theirs, as the entity's do.
      if (go && hotKey) await dbActivity.putFirst(go.workflowId);
      const answers: Array<[TurnRequest, Turn]> = [
        ...(go ? [[go, { go: true, after: state.last }] as [TurnRequest, Turn]] : []),
        ...superseded.map(({ request, after }): [TurnRequest, Turn] => [request, { go: false, after }]),
      ];
      await answer(answers, (given) => {
        if (go && !given) state.running = null;
      });
    } else if (keyInDatabase) {
      // Nothing left to run: the key goes back to the database, and the next event holds it itself.
      // One that asked in the same workflow task still gets its turn.
      if (state.holdsKey) {
        await (freeKeyRecorded ? recordedDbActivity : dbActivity).freeKey(ref);
        state.holdsKey = false;
      }
      if (waiting() === 0 && state.running === null && state.parked === null) return state;
    } else if (!(await condition(() => state.pending.length > 0 || state.running !== null, IDLE_TIMEOUT))) {
      // An event that asks in the same workflow task as the idle timeout still gets its turn.
      if (state.pending.length === 0 && state.running === null) return state;
    }
    if (overflowing()) await carryNoMore();
    // Everything a signal brought is in the state it carries over, but an ending or an action not yet acted on.
    for (const eventId of ended.keys()) if (eventId !== state.running?.eventId) ended.delete(eventId);
    if (continueAsNewDue() && ended.size === 0 && actions.length === 0 && !askedAgain) {
      await continueAsNew<typeof keyEntity>(state);
    }
  }
}
