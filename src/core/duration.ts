import ms, { type StringValue } from 'ms';

/**
 * The milliseconds of a duration as our settings and Temporal's write it (`500ms`, `30s`, `5m`,
 * `24h`, `7d`, or a number of milliseconds), read by `ms`, the library Temporal's SDK reads them
 * with; NaN for anything else. The one duration parser: every setting and option goes through it.
 */
export function millisecondsOf(value: string | number): number {
  if (typeof value === 'number') return value;
  try {
    return ms(value as StringValue);
  } catch {
    return Number.NaN;
  }
}
