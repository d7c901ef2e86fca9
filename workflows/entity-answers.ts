import { getExternalWorkflowHandle, patched } from '@temporalio/workflow';
import { turnSignal, type Turn, type TurnRequest } from '../contracts';
import { recordedDbActivity } from './activities';

/**
 * The patch from which a key's entity answers events by an activity (`giveTurns`), not by a signal
 * of its own to each: the server delivers a workflow's signals to others from its transfer queue,
 * each locking the entity's state twice, beside the requests coming in. A key offered 50 events a
 * second for 10 minutes had 76 answers sent and 32 delivered in 9 minutes, its loop waited on them,
 * and its run reached Temporal's 10,000 signals before it could continue-as-new. Not a local
 * activity: one runs before its workflow task is accepted, and a task the server refuses (a request
 * came in as the entity continued-as-new) is run again with that request, which can change the
 * decision after its first answers were sent.
 */
const ANSWERS_BY_ACTIVITY = 'entity-answers-by-activity';
/**
 * Answers in one activity, at most: no more than the entity's run carries requests either (its
 * `carry`), as each answer holds a version, and an activity's input is held to the same payload
 * limit as the run's. Before the patch, answers in flight at once: well under the 2,000 signals one
 * workflow may have pending.
 */
const ANSWERS_AT_ONCE = 500;

/** Signals the event its turn from the entity itself, as histories from before the patch do; false when its workflow is gone. */
async function give(request: TurnRequest, turn: Turn): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(request.workflowId).signal(turnSignal, turn);
    return true;
  } catch {
    // Its workflow is gone (terminated while it waited): nothing runs for it.
    return false;
  }
}

/**
 * How a key's entity (workflows/entity.ts) whose run carries `carry` requests answers the events of
 * one decision, ANSWERS_AT_ONCE at a time (or `carry`, if fewer); `first` hears whether the first
 * was given. Asks `patched()` once, where the entity starts.
 */
export function answering(carry: number) {
  const byActivity = patched(ANSWERS_BY_ACTIVITY);
  const atOnce = byActivity ? Math.min(ANSWERS_AT_ONCE, carry) : ANSWERS_AT_ONCE;
  return async (answers: Array<[TurnRequest, Turn]>, first?: (given: boolean) => void) => {
    for (let from = 0; from < answers.length; from += atOnce) {
      const batch = answers.slice(from, from + atOnce);
      const given = byActivity
        ? await recordedDbActivity.giveTurns(batch.map(([request, turn]) => ({ workflowId: request.workflowId, turn })))
        : await Promise.all(batch.map(([request, turn]) => give(request, turn)));
      if (from === 0) first?.(given[0]!);
    }
  };
}
