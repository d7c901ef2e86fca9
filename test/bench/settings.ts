/**
 * The bench's sizes, each from its BENCH_* variable. With BENCH_SHORT=1 every measure runs on a few
 * events each, to prove the whole bench works (the suite runs it so, on the embedded database, as a
 * newcomer's `npm run bench` does); a short run's figures are printed but not judged against targets.
 */
export const SHORT = process.env.BENCH_SHORT === '1';

/** The size BENCH_<name> sets, else the full run's or the short run's. */
export function benchSize(name: string, full: number, short: number): number {
  const value = process.env[`BENCH_${name}`];
  return value === undefined || value === '' ? (SHORT ? short : full) : Number(value);
}
