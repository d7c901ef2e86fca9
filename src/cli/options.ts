import { InvalidArgumentError } from 'commander';
import { millisecondsOf } from '../duration';

/** A command-line option's parser for a duration of at least a second (`15m`, `72h`), in milliseconds. */
export function durationMs(flag: string) {
  return (value: string): number => {
    const ms = millisecondsOf(value);
    if (!(ms >= 1000)) throw new InvalidArgumentError(`${flag} must be a duration of at least 1s, such as 15m or 72h.`);
    return ms;
  };
}
