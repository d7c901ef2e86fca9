import { DefaultLogger, Runtime } from '@temporalio/worker';

/**
 * Every test file's Temporal runtime logs warnings and errors only, one line each: the workers' INFO
 * lines ("Worker state changed") would bury the test output, and so would a stack per retried
 * activity in the tests that make activities fail on purpose. Processes the tests spawn log as in
 * production.
 */
Runtime.install({
  logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
    const where = meta?.activityType ? ` ${String(meta.activityType)} attempt ${String(meta.attempt)} (${String(meta.workflowId)})` : '';
    const error = meta?.error instanceof Error ? `: ${meta.error.name}: ${meta.error.message}` : '';
    process.stderr.write(`[temporal ${level}] ${message}${where}${error}\n`);
  }),
});
