import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { InvalidArgumentError } from 'commander';

/** A command-line option's parser for a duration of at least a second (`15m`, `72h`), in milliseconds. */
export function durationMs(flag: string) {
  return (value: string): number => {
    let ms: number;
    try {
      ms = msToNumber(value as Duration);
    } catch {
      ms = Number.NaN;
    }
    if (!(ms >= 1000)) throw new InvalidArgumentError(`${flag} must be a duration of at least 1s, such as 15m or 72h.`);
    return ms;
  };
}
