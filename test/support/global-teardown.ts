import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { temporalTestEnv?: TestWorkflowEnvironment }).temporalTestEnv?.teardown();
  (globalThis as { throwawayPostgres?: { remove(): void } }).throwawayPostgres?.remove();
}
