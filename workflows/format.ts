/** Text for people: amounts, and the time of the current workflow task. */

/** `42.00 EUR` from minor units. */
export function formatAmount(amount: number, currency: string): string {
  return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
}

/**
 * The time of the current workflow task: the sandbox's `Date`, which Temporal fixes per task, so a
 * replay computes the same deadlines.
 */
export function workflowTime(): Date {
  return new Date();
}
