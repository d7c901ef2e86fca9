import { celJs, runConformance } from '../support/cel-conformance';

/**
 * What cel-js passed of CEL's conformance suite, as filters run it, when we chose it
 * (docs/flows.md#several-flows-for-one-event-with-filters). An upgrade that passes fewer fails here;
 * one that passes more moves these figures up.
 */
const PASSED_WHEN_CHOSEN = { core: 886, unchecked: 68, extensions: 90 };

it('passes at least as much of CEL’s conformance suite as when we chose it, in every category', () => {
  const tally = runConformance(celJs);
  expect(Object.fromEntries(Object.entries(tally).map(([category, { total }]) => [category, total]))).toEqual({ core: 966, unchecked: 96, extensions: 493 });
  for (const [category, passed] of Object.entries(PASSED_WHEN_CHOSEN)) expect(tally[category as keyof typeof tally].passed).toBeGreaterThanOrEqual(passed);
});
