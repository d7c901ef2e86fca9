import { temporal } from '@temporalio/proto';
import { OperationRejectedError } from '../../src/core/errors';
import { parseResetTarget, resetPoint } from '../../src/temporal/reset-points';

const T = temporal.api.enums.v1.EventType;
const event = (eventId: number, eventType: number, extra: Record<string, unknown> = {}) =>
  ({ eventId, eventType, ...extra }) as unknown as temporal.api.history.v1.IHistoryEvent;

// started · task 4 · activity 5-7 ok · task 10 · activity 11 scheduled, 13 failed · task 16 · run failed 17
const history = [
  event(1, T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
  event(4, T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
  event(5, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
  event(7, T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
  event(10, T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
  event(11, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
  event(13, T.EVENT_TYPE_ACTIVITY_TASK_FAILED, { activityTaskFailedEventAttributes: { scheduledEventId: 11 } }),
  event(16, T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
  event(17, T.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED),
];

describe('resetPoint', () => {
  it('first and last-task are the first and last completed workflow tasks, as the temporal CLI chooses them', () => {
    expect(resetPoint(history, 'first')).toBe(4);
    expect(resetPoint(history, 'last-task')).toBe(16);
  });

  it('last-failure is the workflow task before the failed activity was scheduled, not before the run failed', () => {
    expect(resetPoint(history, 'last-failure')).toBe(10);
  });

  it('last-failure of a run that failed in workflow code is the task before that failure', () => {
    const failedInCode = history.filter((e) => e.eventType !== T.EVENT_TYPE_ACTIVITY_TASK_FAILED);
    expect(resetPoint(failedInCode, 'last-failure')).toBe(16);
  });

  it('accepts a completed workflow task by ID and refuses any other event, naming the valid ones', () => {
    expect(resetPoint(history, 10)).toBe(10);
    expect(() => resetPoint(history, 11)).toThrow(
      new OperationRejectedError('History event 11 is not a completed workflow task of this run; reset to one of: 4, 10, 16.'),
    );
  });

  it('refuses last-failure on a run with no failure', () => {
    expect(() => resetPoint(history.slice(0, 5), 'last-failure')).toThrow(/no failure to reset before/);
  });

  it('parses --to', () => {
    expect(['first', 'last-task', 'last-failure', '42'].map(parseResetTarget)).toEqual(['first', 'last-task', 'last-failure', 42]);
    expect(() => parseResetTarget('yesterday')).toThrow(OperationRejectedError);
  });
});
