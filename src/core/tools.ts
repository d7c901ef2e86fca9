import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths';

/** The git-ignored folder our install scripts put pinned binaries in. */
const TOOLS_BIN = path.join(PROJECT_ROOT, '.tools', 'bin');
const TEMPORAL_HINT = 'Run `bash scripts/install-temporal.sh` (npm run dev and npm test do it for you).';
const SERVER_HINT = 'Run `bash scripts/install-temporal-server.sh` (npm run cluster does it for you).';

/** The `temporal` CLI installed by scripts/install-temporal.sh; TEMPORAL_CLI_PATH overrides it. */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return installed(env.TEMPORAL_CLI_PATH || path.join(TOOLS_BIN, 'temporal'), 'temporal CLI', TEMPORAL_HINT);
}

/** The time-skipping test server installed by scripts/install-temporal.sh. */
export function temporalTestServerPath(env: NodeJS.ProcessEnv = process.env): string {
  return installed(env.TEMPORAL_TEST_SERVER_PATH || path.join(TOOLS_BIN, 'temporal-test-server'), 'Temporal test server', TEMPORAL_HINT);
}

/** The Temporal server built by scripts/install-temporal-server.sh. */
export function temporalServerPath(): string {
  return installed(path.join(TOOLS_BIN, 'temporal-server'), 'Temporal server', SERVER_HINT);
}

/** Its SQL schema tool, with the PostgreSQL schemas embedded. */
export function temporalSqlToolPath(): string {
  return installed(path.join(TOOLS_BIN, 'temporal-sql-tool'), 'Temporal SQL tool', SERVER_HINT);
}

function installed(file: string, what: string, hint: string): string {
  if (!existsSync(file)) throw new Error(`The ${what} is not at ${file}. ${hint}`);
  return file;
}
