import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isRunning } from '../core/pid';

/**
 * What a running `npm run dev` hands the `durable-webhooks` CLI, so that every documented command
 * works on the two-command path with nothing configured: the embedded database's URL, the Stripe
 * stand-in, and the development secrets its receiver verifies with. Kept in `<DATA_DIR>/dev.json`
 * while it runs; the CLI takes from it only what its own environment leaves unset.
 */
interface Handoff {
  pid: number;
  env: Record<string, string>;
}

const handoffFile = (dataDir: string) => path.join(dataDir, 'dev.json');

/** Writes the handoff for the CLI; returns what removes it when `npm run dev` stops. */
export function handOff(dataDir: string, env: Record<string, string>): () => void {
  const file = handoffFile(dataDir);
  writeFileSync(file, JSON.stringify({ pid: process.pid, env } satisfies Handoff), { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

/**
 * The variables a running `npm run dev` with this DATA_DIR offers and `env` leaves unset (or
 * empty); nothing when none runs (a file left by one that was killed is ignored).
 */
export function takeHandoff(dataDir: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const file = handoffFile(dataDir);
  if (!existsSync(file)) return {};
  const handoff = JSON.parse(readFileSync(file, 'utf8')) as Handoff;
  if (!isRunning(handoff.pid)) return {};
  return Object.fromEntries(Object.entries(handoff.env).filter(([name]) => !env[name]));
}
