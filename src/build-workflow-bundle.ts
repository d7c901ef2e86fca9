import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_PATH, WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './temporal/worker';

/**
 * `npm run build`'s last step: bundles the compiled `workflows/` once, so production workers load
 * code instead of running webpack at every start.
 */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
  });
  mkdirSync(path.dirname(WORKFLOW_BUNDLE_PATH), { recursive: true });
  writeFileSync(WORKFLOW_BUNDLE_PATH, code);
  console.log(`workflow bundle: ${path.relative(process.cwd(), WORKFLOW_BUNDLE_PATH)} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((error: Error) => {
  console.error(`cannot bundle the workflows: ${error.message}`);
  process.exit(1);
});
