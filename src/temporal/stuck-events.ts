import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Queryable } from '../db/database';
import { markRecovered, markStuck } from '../db/event-list';

/** An event whose activity failed this many attempts in a row is stuck: the console groups it with others stuck the same way. */
export const STUCK_AFTER_ATTEMPTS = 3;

/**
 * An activity interceptor for event workflows: the third failed attempt of an activity (and each
 * after it) marks its event stuck with the failure's class (`sendEmail › Error`); the next attempt
 * that succeeds clears it. Retries themselves stay Temporal's; this only tells the console, which
 * cannot ask Temporal about every running event. A write that fails never fails the activity.
 */
export function stuckEvents(db: Queryable): ActivityInterceptorsFactory {
  return (context) => {
    const inbound: ActivityInboundCallsInterceptor = {
      async execute(input, next) {
        const { attempt, activityType } = context.info;
        const workflowId = context.info.workflowExecution?.workflowId;
        if (workflowId === undefined) return next(input);
        try {
          const result = await next(input);
          if (attempt >= STUCK_AFTER_ATTEMPTS) await markRecovered(db, workflowId).catch(() => undefined);
          return result;
        } catch (error) {
          const retried = !(error instanceof ApplicationFailure && error.nonRetryable);
          if (retried && attempt >= STUCK_AFTER_ATTEMPTS) await markStuck(db, workflowId, `${activityType} › ${kindOf(error)}`).catch(() => undefined);
          throw error;
        }
      },
    };
    return { inbound };
  };
}

/** The failure's type, as the workflow's failure class names it: an ApplicationFailure's type, else the error's name. */
function kindOf(error: unknown): string {
  if (error instanceof ApplicationFailure) return error.type ?? 'Error';
  return error instanceof Error ? error.name : 'Error';
}
