import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_BUNDLES, WORKFLOWS_PATH } from './temporal/worker';

/**
 * `npm run build`'s last step: bundles the compiled `workflows/` once, without and with the tracing
 * interceptors, so production workers load code instead of running webpack at every start.
 */
async function main(): Promise<void> {
  for (const { file, interceptorModules } of PREBUILT_BUNDLES) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [...interceptorModules],
      logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
    });
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, code);
    console.log(`workflow bundle: ${path.relative(process.cwd(), file)} (${Math.round(code.length / 1024)} KiB)`);
  }
}

main().catch((error: Error) => {
  console.error(`cannot bundle the workflows: ${error.message}`);
  process.exit(1);
});
