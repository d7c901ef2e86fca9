import ms, { type StringValue } from 'ms';
import { OperationRejectedError } from './errors';

/**
 * The milliseconds of a duration as our settings and Temporal's write it (`500ms`, `30s`, `5m`,
 * `24h`, `7d`, or a number of milliseconds), read by `ms`, the library Temporal's SDK reads them
 * with; NaN for anything else. The one duration parser: every setting, option and point in time goes through it.
 */
export function millisecondsOf(value: string | number): number {
  if (typeof value === 'number') return value;
  try {
    return ms(value as StringValue);
  } catch {
    return Number.NaN;
  }
}

/**
 * An operator's point in time: a duration back from `now` (`30m`, `72h`, `7d`, as `millisecondsOf`
 * reads it, with its unit) or an ISO 8601 time. `field` names it in the error (`since`, `until`),
 * which the CLI's flags, `/admin` and the console share.
 */
export function pointInTime(value: string, field: string, now = new Date()): Date {
  const ago = /^\d[\d.]*\s*[a-z]+$/i.test(value.trim()) ? millisecondsOf(value.trim()) : Number.NaN;
  const time = Number.isFinite(ago) ? new Date(now.getTime() - ago) : new Date(value);
  if (Number.isNaN(time.getTime())) throw new OperationRejectedError(`"${field}" must be a duration (30m, 2h, 3d) or an ISO 8601 time, not "${value}".`);
  return time;
}
