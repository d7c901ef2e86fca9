import { Option } from 'commander';

/** Prints `value` as JSON with --json, else the human-readable text. */
export function print(asJson: boolean | undefined, value: unknown, text: () => string): void {
  console.log(asJson ? JSON.stringify(value, null, 2) : text());
}

/** The `--json` option every command takes, one way: `what` says what it prints. */
export function jsonOption(what = 'print JSON instead of text'): Option {
  return new Option('--json', what);
}
