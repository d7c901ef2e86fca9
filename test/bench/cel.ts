import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { compileFilter } from '../../src/core/filters';
import { bufbuildCel, celJs, runConformance, type Tally } from '../support/cel-conformance';
import { benchSize } from './settings';

/** Evaluations of the filter per library (`BENCH_CEL_EVALUATIONS`). */
const EVALUATIONS = benchSize('CEL_EVALUATIONS', 100_000, 5_000);

/** A filter of a comparison, a `double()` and two `==`, over Shopify's paid-order sample body. */
const FILTER = 'double(body.total_price) >= 40.0 && body.financial_status == "paid" && body.currency == "EUR"';

/**
 * The two CEL libraries the routes' filters could use (docs/flows.md#several-flows-for-one-event-with-filters),
 * measured side by side: CEL's conformance suite, as far as a JSON body can meet it
 * (test/support/cel-conformance.ts), and the time of one filter over Shopify's paid-order body, as
 * each is used: cel-js compiled as a route's filter is, `@bufbuild/cel` planned once, both given
 * the parsed body as it is.
 */
export function measureCelLibraries() {
  const body = JSON.parse(readFileSync(path.join(__dirname, '../../src/providers/fixtures/shopify.orders-paid.json'), 'utf8')) as unknown;
  const event = { type: 'orders/paid', source: 'shopify', provider: 'shopify', tenant: null };
  const filter = compileFilter(FILTER);
  const planned = plan(celEnv(), parse(FILTER));
  const celJsOnce = () => filter.matches({ body, event });
  const bufbuildOnce = () => {
    const answer = planned({ body } as never);
    if (isCelError(answer)) throw answer;
    return answer === true;
  };
  if (!celJsOnce() || !bufbuildOnce()) throw new Error(`The bench's filter ${FILTER} must hold for Shopify's paid-order sample in both libraries.`);
  const time = (once: () => boolean) => {
    const started = performance.now();
    for (let index = 0; index < EVALUATIONS; index++) once();
    return ((performance.now() - started) * 1_000) / EVALUATIONS;
  };
  // Warm both, then each twice, alternating, keeping each one's faster run.
  time(celJsOnce);
  time(bufbuildOnce);
  const celJsMicros = Math.min(time(celJsOnce), time(celJsOnce));
  const bufbuildMicros = Math.min(time(bufbuildOnce), time(bufbuildOnce));
  return {
    filter: FILTER,
    evaluations: EVALUATIONS,
    celJs: { microsPerFilter: round(celJsMicros), conformance: runConformance(celJs) },
    bufbuild: { microsPerFilter: round(bufbuildMicros), conformance: runConformance(bufbuildCel) },
  };
}

/** One library's line: its time per filter and what it passed of each category of the suite. */
export const celLine = (name: string, { microsPerFilter, conformance }: { microsPerFilter: number; conformance: Tally }) =>
  `${name}: ${microsPerFilter} µs per filter; conformance ${Object.entries(conformance)
    .map(([category, { passed, total }]) => `${category} ${passed}/${total}`)
    .join(', ')}`;

const round = (value: number) => Math.round(value * 100) / 100;
