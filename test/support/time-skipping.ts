import { TestWorkflowEnvironment } from '@temporalio/testing';
import { indexedTypes } from '../../src/temporal/namespace';
import { temporalTestServerPath } from '../../src/core/tools';

/**
 * The time-skipping test server (the pinned one from .tools/bin, never a download), with our search
 * attributes registered: it refuses a workflow's upsert of one it does not know, as a cluster would.
 */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: temporalTestServerPath() } } });
  await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes: indexedTypes() });
  return env;
}
