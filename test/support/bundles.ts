import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { ROOT } from './processes';

/**
 * Another build of the flows: today's workflows/ and contracts/, copied, with `from` replaced by `to`
 * in one file of workflows/, bundled as `npm run build` bundles them. Throws when `from` is not in
 * the file, so a test of a change never silently builds today's code.
 */
export async function bundleWithChange(file: string, from: string, to: string): Promise<WorkflowBundle> {
  const copy = mkdtempSync(path.join(tmpdir(), 'dw-build-'));
  try {
    for (const dir of ['workflows', 'contracts']) cpSync(path.join(ROOT, dir), path.join(copy, dir), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    const changed = path.join(copy, 'workflows', file);
    const source = readFileSync(changed, 'utf8');
    if (!source.includes(from)) throw new Error(`workflows/${file} no longer has ${JSON.stringify(from)}: the test's change needs a new anchor.`);
    writeFileSync(changed, source.replace(from, to));
    return await bundleWorkflowCode({
      workflowsPath: path.join(copy, 'workflows'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
