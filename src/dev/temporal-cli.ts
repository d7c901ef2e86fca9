import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config';

const TOOLS_BIN = path.join(PROJECT_ROOT, '.tools', 'bin');
const INSTALL_HINT = 'Run `bash scripts/install-temporal.sh` (npm run dev and npm test do it for you).';

/** The `temporal` CLI installed by scripts/install-temporal.sh; TEMPORAL_CLI_PATH overrides it. */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return installed(env.TEMPORAL_CLI_PATH || path.join(TOOLS_BIN, 'temporal'), 'temporal CLI');
}

/** The time-skipping test server installed by scripts/install-temporal.sh. */
export function temporalTestServerPath(env: NodeJS.ProcessEnv = process.env): string {
  return installed(env.TEMPORAL_TEST_SERVER_PATH || path.join(TOOLS_BIN, 'temporal-test-server'), 'Temporal test server');
}

function installed(file: string, what: string): string {
  if (!existsSync(file)) throw new Error(`The ${what} is not at ${file}. ${INSTALL_HINT}`);
  return file;
}
