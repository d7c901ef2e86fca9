import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors';

/**
 * How a secret's value is read from the environment: the variable, or the file `<NAME>_FILE` names,
 * and beside it the one being rotated out, `<NAME>_PREVIOUS` (./sources.ts reads them for the
 * built-in sources; src/providers/secret-files.ts re-reads a file when it changes).
 */

/** The suffix of the variable that holds the secret being rotated out: `GITHUB_WEBHOOK_SECRET_PREVIOUS`. */
export const PREVIOUS = '_PREVIOUS';

/**
 * A secret variable and its `_PREVIOUS` companion, each value taken whole: a secret may contain
 * spaces and commas (GitHub's may), and no piece of one may ever verify a signature on its own.
 * Either may come from a file instead, `<NAME>_FILE` (a Kubernetes Secret mounted as files).
 */
export function withPrevious(env: NodeJS.ProcessEnv, name: string): string[] {
  return [secretValue(env, name), secretValue(env, name + PREVIOUS)].filter((value): value is string => Boolean(value));
}

/** The suffix of the variable that names a file holding a secret instead: `STRIPE_WEBHOOK_SECRET_FILE`. */
export const FILE = '_FILE';

/** `NAME_FILE`'s path, when set; both it and `NAME` set is a configuration error. */
export function fileOf(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const file = env[name + FILE] || undefined;
  if (file !== undefined && env[name]) throw new ConfigError(`${name} and ${name}${FILE} are both set; set one.`);
  return file;
}

/** `NAME`'s value, or the content of the file `NAME_FILE` names (without its final newline). */
function secretValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const file = fileOf(env, name);
  return file === undefined ? env[name] : readSecretFile(file, name + FILE);
}

/** A secret file's value: its content without the newline an editor or `kubectl create secret --from-file` may end it with. */
export function readSecretFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(`${what} (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
}
