import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes';

/** Each Go-built tool the tests use, and the script that builds it (Helm's builds the chart's validator too). */
const SCRIPTS = {
  mailpit: 'install-mailpit.sh',
  'stripe-mock': 'install-stripe-mock.sh',
  helm: 'install-helm.sh',
  'k8s-validate': 'install-helm.sh',
} as const;

/** How long a test waits for a tool's first build: minutes on a new two-core machine, while other tests run. */
export const GO_TOOL_BUILD_MS = 15 * 60_000;

/**
 * A Go-built tool's path, built first where it is missing: only the few files that use one wait for
 * its build, not the whole run (scripts/install-test-deps.sh leaves them out). The scripts build
 * once and one at a time, so a file that asks while `.ci/run` builds it in the background waits on
 * that build's lock.
 */
export async function goTool(name: keyof typeof SCRIPTS): Promise<string> {
  try {
    await promisify(execFile)('bash', [path.join(ROOT, 'scripts', SCRIPTS[name])], { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`building ${name} failed (bash scripts/${SCRIPTS[name]}):\n${stderr ?? String(error)}`, { cause: error });
  }
  return path.join(ROOT, '.tools/bin', name);
}
