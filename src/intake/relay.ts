import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EventVia } from '../../contracts';
import type { Queryable } from '../db/database';
import { deferStart, type PendingStart } from '../db/inbox';
import { messageWithCauses } from '../core/errors';
import { withoutAddresses } from '../core/redact';
import { isUnavailable } from '../temporal/availability';
import { DEFAULT_START_TIMEOUT_MS, workflowStartOptions } from './start-data';

/**
 * Starts the workflow of a committed body, as the receiver would have: same ID, input, policies,
 * search attributes and summary. `started` when Temporal recorded it now, `already started` when the
 * workflow exists (another replica, or the receiver's own fast path, was first): either way the
 * row is done. Throws when Temporal did not answer.
 */
export async function startPending(
  client: Client,
  taskQueue: string,
  pending: Pick<PendingStart, 'workflowId' | 'via' | 'start'>,
): Promise<'started' | 'already started'> {
  try {
    await client.connection.withDeadline(Date.now() + DEFAULT_START_TIMEOUT_MS, () =>
      client.workflow.start(pending.start.flow, workflowStartOptions(pending.workflowId, pending.start, pending.via as EventVia, taskQueue)),
    );
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already started';
    throw error;
  }
}

/**
 * Starts Temporal refused (not ones it could not answer, which the inbox retries for as long as
 * Temporal is away) this many times are dead-lettered: a start that fails so for a minute and a half
 * (the delays below) fails for a cause an operator must fix.
 */
export const MAX_START_ATTEMPTS = 10;

/** Records a failed start: due again after its delay, or dead-lettered. Returns whether it was dead-lettered. */
export async function recordFailedStart(db: Queryable, pending: PendingStart, error: unknown, maxAttempts = MAX_START_ATTEMPTS): Promise<boolean> {
  const deadLetter = !isUnavailable(error) && pending.attempts + 1 >= maxAttempts;
  // With its causes: "Failed to start Workflow" alone would not say what to fix.
  await deferStart(db, pending, withoutAddresses(messageWithCauses(error)), retryDelayMs(pending.attempts), deadLetter);
  return deadLetter;
}

/**
 * When a failed start is tried again: 1 s after the first failure, doubling, at most 10 s, so a
 * backlog starts draining within seconds of Temporal's return however long it was away.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(10_000, 1_000 * 2 ** Math.min(attempts, 4));
}
