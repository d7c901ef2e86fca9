import { createServer } from 'node:net';
import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogEntry } from '@temporalio/worker';
import { isInternalWorkflowId } from '../../contracts';
import type { Logger } from '../core/logger';
import { describeError } from '../core/redact';

/**
 * Installs the Temporal runtime of a worker process: its logger forwards every SDK and Core line
 * into ours (one JSON line each, with our field names), and, given an address, it serves the SDK's
 * Prometheus metrics there (with our business counters beside them: `activities/metrics.ts`).
 * Must run before the process opens a worker connection.
 */
export function installRuntime(logger: Logger, options: { metricsAddress?: string } = {}): void {
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => forward(logger, entry)),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} },
      ...(options.metricsAddress && { metrics: { prometheus: { bindAddress: options.metricsAddress } } }),
    },
  });
}

const LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * One SDK log entry as our line: the SDK's metadata under our names (`workflowRunId` → `runId`,
 * `activityType` → `activity`), and only the IDs: never arguments or results. An error is its name,
 * code and message without addresses (`describeError`).
 */
function forward(logger: Logger, { level, message, meta = {} }: LogEntry): void {
  const workflowId = typeof meta.workflowId === 'string' ? meta.workflowId : undefined;
  const fields = {
    sdk: meta.sdkComponent,
    taskQueue: meta.taskQueue,
    workflowType: meta.workflowType,
    workflowId,
    // An event workflow's ID is its event ID (behind its source's prefix, if any).
    eventId: workflowId && !isInternalWorkflowId(workflowId) ? workflowId : undefined,
    runId: meta.runId ?? meta.workflowRunId,
    activity: meta.activityType,
    attempt: meta.attempt,
    error: meta.error instanceof Error ? describeError(meta.error) : undefined,
  };
  logger[LEVELS[level]](fields, message);
}

/**
 * Resolves if `host:port` can be bound now (the runtime's Prometheus server binds it right after),
 * rejects with EADDRINUSE if another process holds it: the runtime itself would stop the worker.
 */
export function portIsFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
