declare module '*.cjs';

/** node-postgres' conversion of a query's value to what it sends (a string, bytes, or null): what the tests write out as a literal. */
declare module 'pg/lib/utils' {
  export function prepareValue(value: unknown): string | Buffer | null;
}
