import { setTimeout as delay } from 'node:timers/promises';

/** Resolves once `condition` is true, checking every `intervalMs`; rejects with `what` after `timeoutMs`. */
export async function eventually(what: string, condition: () => Promise<boolean> | boolean, { timeoutMs = 30_000, intervalMs = 200 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not true within ${timeoutMs / 1000} s`);
    await delay(intervalMs);
  }
}

/** Whether `promise` settles within `ms`: a bound on what might hang, so the test says so rather than timing out. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    late,
  ]);
  clearTimeout(timer);
  return settled;
}
