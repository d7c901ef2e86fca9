import { userInfo } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { millisecondsOf } from '../core/duration';
import { readRate } from '../config/sources';

/** A command-line option's parser for a duration of at least a second (`15m`, `72h`), in milliseconds. */
export function durationMs(flag: string) {
  return (value: string): number => {
    const ms = millisecondsOf(value);
    if (!(ms >= 1000)) throw new InvalidArgumentError(`${flag} must be a duration of at least 1s, such as 15m or 72h.`);
    return ms;
  };
}

/** A command-line option's parser for a rate of starts (`20/s`, `600/m`, `20`), per second. */
export function rateOption(flag: string) {
  return (value: string): number => {
    try {
      return readRate(value, flag);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/** Who acts from this shell, kept with what a command changes (a hold, a bulk job, a key's skip or retry). */
export const operator = () => `cli user "${userInfo().username}"`;
