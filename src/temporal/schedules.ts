import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { INTERNAL_WORKFLOW_ID_PREFIX, reconcileScheduleId, type BackfillCounts, type ReconcileInput, type ReconcileProvider } from '../../contracts';
import { reconcileFlow } from '../flows';
import { millisecondsOf } from '../core/duration';
import { OperationRejectedError } from '../core/errors';

/** One provider's reconciliation, as `reconcile status` shows it. */
export interface ReconcileStatus {
  provider: ReconcileProvider;
  scheduleId: string;
  enabled: boolean;
  everyMs: number | null;
  lookbackMs: number | null;
  nextRun: string | null;
  /** The latest runs, newest first: when, their status, and their counts once completed. */
  runs: Array<{ workflowId: string; startedAt: string; status: string; counts: BackfillCounts | null }>;
}

export const RECONCILE_PROVIDERS: readonly ReconcileProvider[] = ['stripe', 'github', 'paddle', 'square'];

/**
 * Reconciliation as Temporal Schedules (`reconcile-stripe`, `reconcile-github`), visible in the
 * Temporal UI: each run is a `reconcile` workflow that lists the provider's API over the lookback
 * window. A run still going when the next is due is left to finish (overlap: skip).
 */
export class ReconcileSchedules {
  constructor(
    private readonly client: Client,
    private readonly options: { taskQueue: string },
  ) {}

  /** Creates the provider's schedule, or updates its interval and lookback. */
  async enable(provider: ReconcileProvider, everyMs: number, lookbackMs: number): Promise<ReconcileStatus> {
    const action: ScheduleOptionsStartWorkflowAction<typeof reconcileFlow.workflow> = {
      type: 'startWorkflow',
      workflowType: reconcileFlow.workflow,
      workflowId: `${INTERNAL_WORKFLOW_ID_PREFIX}${reconcileScheduleId(provider)}`,
      taskQueue: this.options.taskQueue,
      args: [{ provider, lookbackMs } satisfies ReconcileInput],
    };
    const spec = { intervals: [{ every: everyMs }] };
    try {
      await this.client.schedule.create({ scheduleId: reconcileScheduleId(provider), spec, action, policies: { overlap: ScheduleOverlapPolicy.SKIP } });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      await this.client.schedule.getHandle(reconcileScheduleId(provider)).update((previous) => ({ ...previous, spec, action }));
    }
    return this.status(provider);
  }

  async disable(provider: ReconcileProvider): Promise<void> {
    try {
      await this.client.schedule.getHandle(reconcileScheduleId(provider)).delete();
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) throw new OperationRejectedError(`Reconciliation from ${provider} is not enabled.`);
      throw error;
    }
  }

  async status(provider: ReconcileProvider): Promise<ReconcileStatus> {
    const scheduleId = reconcileScheduleId(provider);
    let description;
    try {
      description = await this.client.schedule.getHandle(scheduleId).describe();
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return { provider, scheduleId, enabled: false, everyMs: null, lookbackMs: null, nextRun: null, runs: [] };
      throw error;
    }
    const interval = description.spec.intervals?.[0]?.every;
    const action = description.action as { args?: unknown[] };
    const runs = await Promise.all(
      [...description.info.recentActions].reverse().map(async (recent) => {
        const { workflowId, firstExecutionRunId } = recent.action.workflow;
        const handle = this.client.workflow.getHandle(workflowId, firstExecutionRunId);
        const { status } = await handle.describe();
        const counts = status.name === 'COMPLETED' ? ((await handle.result()) as BackfillCounts) : null;
        return { workflowId, startedAt: recent.takenAt.toISOString(), status: status.name.toLowerCase(), counts };
      }),
    );
    return {
      provider,
      scheduleId,
      enabled: !description.state.paused,
      everyMs: interval === undefined ? null : millisecondsOf(interval),
      lookbackMs: (action.args?.[0] as ReconcileInput | undefined)?.lookbackMs ?? null,
      nextRun: description.info.nextActionTimes[0]?.toISOString() ?? null,
      runs,
    };
  }
}
