/** Prints `value` as JSON with --json, else the human-readable text. */
export function print(asJson: boolean | undefined, value: unknown, text: () => string): void {
  console.log(asJson ? JSON.stringify(value, null, 2) : text());
}
