import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { backfillWorkflowId, type BackfillCounts, type BackfillInput } from '../../contracts';
import { checkBackfillRequest } from './run';
import { BackfillRunningError, ResourceNotFoundError } from '../core/errors';
import { backfillFlow } from '../flows';

/** A backfill as `GET /admin/backfill/:source` shows it. */
export interface BackfillStatus {
  workflowId: string;
  runId: string;
  status: string;
  /** Its counts once it completed. */
  counts: BackfillCounts | null;
}

/**
 * Operators' backfills as workflows (`durable-webhooks:backfill:<source>`), run by a worker: the
 * request returns at once with the workflow's ID, and a second backfill of a source while one runs
 * is refused (409) rather than run beside it.
 */
export class Backfills {
  constructor(
    private readonly client: Client,
    private readonly options: { taskQueue: string; stripeSources?: readonly string[] },
  ) {}

  /** The Stripe sources of WEBHOOKS_CONFIG a backfill may go to, besides the built-in ones. */
  get stripeSources(): readonly string[] {
    return this.options.stripeSources ?? [];
  }

  async start(input: BackfillInput): Promise<{ workflowId: string; runId: string }> {
    checkBackfillRequest({ provider: input.provider, since: new Date(input.since), mode: input.mode });
    const workflowId = backfillWorkflowId(input.source ?? input.provider);
    try {
      const handle = await this.client.workflow.start(backfillFlow.workflow, {
        workflowId,
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        staticSummary: `backfill ${input.provider} into ${input.source ?? input.provider} since ${input.since} (${input.mode})`,
      });
      return { workflowId, runId: handle.firstExecutionRunId };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        throw new BackfillRunningError(`A backfill of ${input.source ?? input.provider} is running (${workflowId}); wait for it to end.`);
      throw error;
    }
  }

  /** The source's latest backfill. */
  async status(source: string): Promise<BackfillStatus> {
    const handle = this.client.workflow.getHandle<typeof backfillFlow.workflow>(backfillWorkflowId(source));
    try {
      const { runId, status } = await handle.describe();
      const counts = status.name === 'COMPLETED' ? await handle.result() : null;
      return { workflowId: handle.workflowId, runId, status: status.name.toLowerCase(), counts };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ResourceNotFoundError('backfill', source);
      throw error;
    }
  }
}
