/**
 * The Node.js lines durable-webhooks supports (the LTS lines it is tested on), and when each line
 * that may still be installed reached or reaches end of life (https://github.com/nodejs/Release).
 * A line newer than the last listed is current.
 */
export const SUPPORTED_NODE_LINES = [22, 24] as const;

const END_OF_LIFE: Readonly<Record<number, string>> = {
  16: '2023-09-11',
  17: '2022-06-01',
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
};

/** One line for `npm run dev` when this Node.js no longer gets security fixes; undefined while it does. */
export function endOfLifeWarning(version: string = process.versions.node, today: Date = new Date()): string | undefined {
  const major = Number(version.split('.')[0]);
  // Older than any line listed: long past its end.
  const endOfLife = major < Math.min(...Object.keys(END_OF_LIFE).map(Number)) ? '' : END_OF_LIFE[major];
  if (endOfLife === undefined || today.toISOString().slice(0, 10) < endOfLife) return undefined;
  return `Node.js ${version} reached end of life${endOfLife && ` on ${endOfLife}`} and gets no security fixes; durable-webhooks supports Node.js ${SUPPORTED_NODE_LINES.join(' and ')} (LTS).`;
}
