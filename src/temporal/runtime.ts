import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogEntry } from '@temporalio/worker';
import { isInternalWorkflowId } from '../../contracts';
import type { Logger } from '../core/logger';
import { listenForMetrics } from '../core/metrics-port';
import { describeError } from '../core/redact';

/**
 * Installs the Temporal runtime of a worker process: its logger forwards every SDK and Core line
 * into ours (one JSON line each, with our field names), and, given an address, it serves the SDK's
 * Prometheus metrics there (with our business counters beside them: `activities/metrics.ts`).
 * Must run before the process opens a worker connection.
 */
function installRuntime(logger: Logger, options: { metricsAddress?: string } = {}): void {
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
 * Installs the runtime (`installRuntime`) serving its metrics at `address`, at the next free port
 * after it when another process holds it, or with none when no port is free or none is asked;
 * resolves with where they are served. The install is the bind: a probe before it left a moment in
 * which a second worker started beside this one bound the same port, and this worker stopped on its
 * runtime's failed bind.
 */
export async function installRuntimeServingMetrics(logger: Logger, address: string | undefined, install = installRuntime): Promise<string | undefined> {
  const served =
    address &&
    (await listenForMetrics(address, logger, async (host, port) => {
      try {
        install(logger, { metricsAddress: `${host.includes(':') ? `[${host}]` : host}:${port}` });
      } catch (error) {
        // The runtime says so only in its message (Rust's "Address already in use (os error 98)").
        if (error instanceof Error && /address already in use/i.test(error.message)) throw Object.assign(error, { code: 'EADDRINUSE' });
        throw error;
      }
    }));
  if (!served) install(logger);
  return served;
}
