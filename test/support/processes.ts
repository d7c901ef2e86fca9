import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { distIsFresh } from './build';

export const ROOT = path.resolve(__dirname, '../..');

export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output contains `text`; rejects if the process exits first. */
  waitFor(text: string): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Runs a command in the project folder (or `cwd`), collecting stdout and stderr. `env` adds to this
 * process's environment; a variable set to undefined is left out. `detached`: in a process group of
 * its own, which `process.kill(-child.pid, …)` signals whole, as a terminal's Ctrl-\ or the OOM killer would.
 */
export function spawnProcess(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT, { detached = false } = {}): Spawned {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached });
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (text) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (output.includes(text)) {
            listeners.delete(check);
            resolve();
          }
        };
        listeners.add(check);
        check();
        void exited.then((code) => reject(new Error(`exited with ${code} before printing "${text}":\n${output}`)));
      }),
  };
}

/**
 * Runs a TypeScript entry point of ours in one Node process (tsx as a loader, so signals reach the
 * program itself, not a wrapper).
 */
export function spawnTs(entry: string, args: string[], env: NodeJS.ProcessEnv, options: { detached?: boolean } = {}): Spawned {
  return spawnProcess(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], env, ROOT, options);
}

/**
 * Runs what `npm run <script>` runs for a `node …` script (`receiver`, `worker`: the production
 * build), without npm in between, so signals reach the process itself.
 */
export function spawnNpmScript(script: string, env: NodeJS.ProcessEnv): Spawned {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...args] = scripts[script]!.split(' ');
  if (command !== 'node') throw new Error(`npm run ${script} is "${scripts[script]}", not a node command.`);
  return spawnProcess(process.execPath, args, env);
}

/**
 * Runs the operator CLI to completion. `error` is its diagnostic when it failed: the message of the
 * JSON error line it writes on stderr (component `cli`).
 */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  root = ROOT,
  cwd = root,
): Promise<{ code: number | null; output: string; error?: string }> {
  // The project's build when it is fresh (as under `npm test`): the same code, without compiling it
  // again in every process. Else tsx, by its path: the working directory may be anywhere, and
  // `--import tsx` resolves from there.
  const compiled = root === ROOT && distIsFresh();
  const tsx = pathToFileURL(path.join(root, 'node_modules/tsx/dist/loader.mjs')).href;
  const entry = compiled ? [path.join(root, 'dist/src/cli/index.js')] : ['--import', tsx, path.join(root, 'src/cli/index.ts')];
  const cli = spawnProcess(process.execPath, [...entry, ...args], env, cwd);
  const code = await cli.exited;
  return { code, output: cli.output(), error: cliError(cli.output()) };
}

/**
 * Runs a documented command literally through a shell (`npx durable-webhooks …` included), as a user
 * pastes it, in `cwd`: inside the project folder, npx runs the project's own `bin` from the build.
 */
export async function runShell(command: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; output: string; error?: string }> {
  const shell = spawnProcess('bash', ['-c', command], env, cwd);
  const code = await shell.exited;
  return { code, output: shell.output(), error: code === 0 ? undefined : (cliError(shell.output()) ?? shell.output().trim()) };
}

function cliError(output: string): string | undefined {
  for (const line of output.trim().split('\n').reverse()) {
    try {
      const entry = JSON.parse(line) as { component?: string; level?: string; message?: string };
      if (entry.component === 'cli' && entry.level === 'error') return entry.message;
    } catch {
      // A line of the command's own output, not a diagnostic.
    }
  }
  return undefined;
}
