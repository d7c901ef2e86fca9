import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../core/errors';

/**
 * How a secret's value is read from the environment: the variable, the file `<NAME>_FILE` names, or
 * the file `<NAME>` in `SIGNING_SECRETS_DIR`, and beside it the one being rotated out,
 * `<NAME>_PREVIOUS` (src/config/sources.ts reads them for every source; src/providers/secret-files.ts
 * re-reads a file when it changes).
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

/**
 * SIGNING_SECRETS_DIR: a directory of signing secrets, each file named as the variable it stands for
 * (a Kubernetes Secret mounted as a volume, the chart's `receiver.signingSecret`; compose's
 * `secrets/signing`). Every name a source reads is looked up in it, so no list of names is kept
 * anywhere. When set, it must be a directory, or the receiver does not start.
 */
function signingSecretsDir(env: NodeJS.ProcessEnv): string | undefined {
  const dir = env.SIGNING_SECRETS_DIR || undefined;
  if (dir !== undefined && !(existsSync(dir) && statSync(dir).isDirectory()))
    throw new ConfigError(`SIGNING_SECRETS_DIR (${dir}) is not a directory: mount the Secret of signing secrets there, or unset it.`);
  return dir;
}

/**
 * The file a secret is read from: `NAME_FILE`'s path, or else `NAME` in SIGNING_SECRETS_DIR when it
 * is there. A secret set in two places is a configuration error: which one verifies would be a guess.
 */
export function fileOf(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const named = env[name + FILE] || undefined;
  const dir = signingSecretsDir(env);
  const inDir = dir === undefined ? undefined : path.join(dir, name);
  const file = inDir !== undefined && existsSync(inDir) ? inDir : undefined;
  const places = [env[name] && name, named && name + FILE, file && `SIGNING_SECRETS_DIR/${name}`].filter(Boolean);
  if (places.length > 1) throw new ConfigError(`${name} is set in ${places.join(' and ')}; set one.`);
  return named ?? file;
}

/** `NAME`'s value, or the content of its file (`NAME_FILE`, or `NAME` in SIGNING_SECRETS_DIR), without its final newline. */
export function secretValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const file = fileOf(env, name);
  if (file === undefined) return env[name];
  return readSecretFile(file, env[name + FILE] ? name + FILE : `SIGNING_SECRETS_DIR/${name}`);
}

/** A secret file's value: its content without the newline an editor or `kubectl create secret --from-file` may end it with. */
export function readSecretFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(`${what} (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
}
