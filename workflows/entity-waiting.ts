import { workflowInfo } from '@temporalio/workflow';
import { compareVersions, nextTurns, oldestOf, storedBeyond, type EntityState, type Turn, type TurnRequest } from '../contracts';
import { recordedDbActivity } from './activities';

/**
 * What a key's entity (workflows/entity.ts) does with more waiting requests than its run may carry
 * (`carry`, CARRIED_REQUESTS unless its start says): a continue-as-new carries them all, and
 * Temporal refuses an input past 2 MiB (about 10,000 requests). `answer` gives superseded events
 * their answers, as the entity's decisions do.
 */
export function waitingBeyondCarry(state: EntityState, answer: (answers: Array<[TurnRequest, Turn]>) => Promise<void>) {
  const ref = { flow: state.flow, source: state.source, key: state.key };
  /** How often this run has taken requests back from the database (each take is marked by the run and this count). */
  let takes = 0;

  /**
   * The run carries `carry` requests at most. A `serial` key keeps the oldest half in the run and its
   * newer ones in the database; a `latest` or `coalesce` key supersedes all but the newest, as its
   * next turn would.
   */
  const carryNoMore = async () => {
    if (state.order !== 'serial') {
      const { go, superseded } = nextTurns('latest', state.pending, null);
      state.pending = [go!];
      state.superseded += superseded.length;
      await answer(superseded.map(({ request, after }): [TurnRequest, Turn] => [request, { go: false, after }]));
      return;
    }
    const { kept, stored } = storedBeyond(state.pending, Math.ceil(state.carry / 2));
    // Out of the run before the first write, so that requests arriving meanwhile join the run's.
    state.pending = kept;
    const oldest = oldestOf(stored)!;
    state.stored = {
      count: (state.stored?.count ?? 0) + stored.length,
      oldest: state.stored && compareVersions(state.stored.oldest, oldest) < 0 ? state.stored.oldest : oldest,
    };
    for (let from = 0; from < stored.length; from += state.carry) {
      state.stored.count = await recordedDbActivity.storeWaiting({ ...ref, requests: stored.slice(from, from + state.carry) });
    }
  };

  /**
   * Whether a `serial` key's next turn is in the database: its oldest request there is not newer
   * than every one in the run. A request the run carries twice over (asked again after it was
   * stored) is then never newer than the one in the database, which is taken back first.
   */
  const nextIsStored = () => {
    const oldest = oldestOf(state.pending);
    return state.stored !== null && (oldest === null || compareVersions(oldest, state.stored.oldest) >= 0);
  };

  /** Takes the oldest requests back from the database into the run (but any it carries already), between turns: nothing runs or is parked. */
  const takeBack = async () => {
    const taken = await recordedDbActivity.takeWaiting({ ...ref, count: Math.ceil(state.carry / 2), take: `${workflowInfo().runId}:${++takes}` });
    const carried = new Set(state.pending.map((request) => request.eventId));
    state.pending.push(...taken.requests.filter((request) => !carried.has(request.eventId)));
    state.stored = taken.stored;
  };

  return { carryNoMore, nextIsStored, takeBack };
}
