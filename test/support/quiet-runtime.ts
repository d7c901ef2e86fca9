import { DefaultLogger, Runtime } from '@temporalio/worker';

/**
 * Every test file's Temporal runtime logs warnings and errors only: the workers' INFO lines
 * ("Worker state changed") would bury the test output. Processes the tests spawn log as in production.
 */
Runtime.install({ logger: new DefaultLogger('WARN') });
