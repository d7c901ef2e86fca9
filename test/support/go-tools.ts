import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The install script of each tool the tests build with Go (scripts/install-helm.sh builds helm with its validator). */
const INSTALLERS = {
  mailpit: 'install-mailpit.sh',
  'stripe-mock': 'install-stripe-mock.sh',
  helm: 'install-helm.sh',
  'k8s-validate': 'install-helm.sh',
} as const;

/** How long a test waits for a tool built from an empty Go cache on two cores (Helm is the longest, a few minutes). */
export const GO_TOOL_TIMEOUT_MS = 15 * 60_000;

/**
 * The path of a Go-built tool in .tools/bin, built now by its install script if it is missing. The
 * scripts hold a lock while they build, so a build already under way (`.ci/run` starts them beside
 * `npm test`) is waited for, not repeated. Test files that call this run last (test/support/sequencer.cjs),
 * so such a build has the rest of the run to finish.
 */
export function goTool(name: keyof typeof INSTALLERS): string {
  execFileSync('bash', [path.join(ROOT, 'scripts', INSTALLERS[name])], { stdio: ['ignore', 'ignore', 'inherit'] });
  return path.join(ROOT, '.tools/bin', name);
}
