import { setTimeout as delay } from 'node:timers/promises';

/** Resolves once `condition` is true, checking every `intervalMs`; rejects with `what` after `timeoutMs`. */
export async function eventually(what: string, condition: () => Promise<boolean> | boolean, { timeoutMs = 30_000, intervalMs = 200 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not true within ${timeoutMs / 1000} s`);
    await delay(intervalMs);
  }
}
