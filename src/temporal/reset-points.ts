import { temporal } from '@temporalio/proto';
import { OperationRejectedError } from '../core/errors';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Where a reset (`events reset --to`, `/admin` `"to"`) can point: the `temporal` CLI's reset types, the last failure, or a history event ID. */
export type ResetTarget = 'first' | 'last-task' | 'last-failure' | number;

export function parseResetTarget(value: unknown): ResetTarget {
  if (value === 'first' || value === 'last-task' || value === 'last-failure') return value;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) return Number(value);
  throw new OperationRejectedError(`"to" must be first, last-task, last-failure or a history event ID, not "${String(value)}".`);
}

const RESETTABLE = new Set<number>([EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]);
/** Failures of a step: where a failed workflow's trouble started. */
const STEP_FAILURES = new Set<number>([
  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
]);
const RUN_FAILURES = new Set<number>([EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT]);

/**
 * The WorkflowTaskCompleted event to reset to. `first` and `last-task` are the `temporal` CLI's
 * FirstWorkflowTask and LastWorkflowTask; `last-failure` is the last workflow task completed before
 * the last failed step (for an activity, before it was scheduled), so that step runs again; with no
 * failed step, before the run's own failure.
 */
export function resetPoint(events: readonly HistoryEvent[], to: ResetTarget): number {
  const id = (event: HistoryEvent) => Number(event.eventId);
  const completed = events.filter((event) => RESETTABLE.has(event.eventType ?? -1));
  if (completed.length === 0) throw new OperationRejectedError('This run has no completed workflow task to reset to.');
  if (to === 'first') return id(completed[0]!);
  if (to === 'last-task') return id(completed.at(-1)!);
  if (to === 'last-failure') {
    const lastOf = (types: Set<number>) => events.filter((event) => types.has(event.eventType ?? -1)).at(-1);
    const failure = lastOf(STEP_FAILURES) ?? lastOf(RUN_FAILURES);
    if (!failure) throw new OperationRejectedError('This run has no failure to reset before; reset to first or last-task.');
    const scheduled = failure.activityTaskFailedEventAttributes?.scheduledEventId ?? failure.activityTaskTimedOutEventAttributes?.scheduledEventId;
    const boundary = scheduled ? Number(scheduled) : id(failure);
    const before = completed.filter((event) => id(event) < boundary).at(-1);
    if (!before) throw new OperationRejectedError('No workflow task completed before the failure; reset to first.');
    return id(before);
  }
  if (!completed.some((event) => id(event) === to)) {
    const valid = completed.map(id).join(', ');
    throw new OperationRejectedError(`History event ${to} is not a completed workflow task of this run; reset to one of: ${valid}.`);
  }
  return to;
}
