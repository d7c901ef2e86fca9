import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROVIDERS } from '../../src/providers/index';
import { ROOT, spawnProcess } from '../support/processes';

/**
 * `npm run bench` as a newcomer runs it, with no DATABASE_URL (the embedded database), in its short
 * mode: every measure runs end to end on a few events, so the bench cannot break unseen. Its figures
 * are not judged here: timings belong to the bench, not to tests.
 */
it('runs every measure of npm run bench end to end on the embedded database (BENCH_SHORT=1)', async () => {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...args] = scripts.bench!.split(' ');
  const results = mkdtempSync(path.join(tmpdir(), 'dw-bench-results-'));
  const bench = spawnProcess(path.join(ROOT, 'node_modules/.bin', command!), args, { DATABASE_URL: undefined, BENCH_SHORT: '1', BENCH_RESULTS_DIR: results });
  expect({ code: await bench.exited, output: bench.output() }).toMatchObject({ code: 0 });

  const [file] = readdirSync(results).filter((name) => name.endsWith('.json'));
  const result = JSON.parse(readFileSync(path.join(results, file!), 'utf8')) as {
    database: string;
    settings: { short: boolean };
    ratios: Array<{ id: string; value: number | null }>;
    largeBodies: Array<{ kind: string; ms: number }>;
    refusedDeliveries: { kinds: unknown[] };
    console: { pages: unknown[] };
    hotKey: { events: number; applied: number; superseded: number; lost: number; terminated: number; signalsFailed: number };
    keysAtScale: { events: number; lost: number; outOfOrder: number; notFulfilledOnce: number };
    celLibraries: Record<'celJs' | 'bufbuild', { microsPerFilter: number; conformance: Record<string, { passed: number; total: number }> }>;
  };
  expect(result).toMatchObject({ database: 'embedded PostgreSQL', settings: { short: true } });
  const measured = Object.fromEntries(result.ratios.map((ratio) => [ratio.id, ratio.value]));
  for (const id of ['G1', 'G4', 'G5', 'G6', 'G11', 'G12', 'G13', 'G14', 'G15', 'G16', 'G17'])
    expect({ id, measured: typeof measured[id] }).toEqual({ id, measured: 'number' });
  expect(result.largeBodies.map((cost) => cost.kind).sort()).toEqual(PROVIDERS.map((provider) => provider.kind).sort());
  expect(result.refusedDeliveries.kinds).toHaveLength(PROVIDERS.length);
  expect(result.console.pages.length).toBeGreaterThan(10);
  // Both CEL libraries timed, and run through the same 966 checked tests of CEL's conformance suite.
  for (const library of [result.celLibraries.celJs, result.celLibraries.bufbuild])
    expect(library).toMatchObject({ microsPerFilter: expect.any(Number), conformance: { core: { total: 966 } } });
  // One order's 100 states in 2 s: every one applied or superseded, none lost, its entity never terminated, no signal to it failed.
  expect(result.hotKey).toMatchObject({ events: 100, lost: 0, terminated: 0, signalsFailed: 0 });
  expect(result.hotKey.applied + result.hotKey.superseded).toBe(100);
  // 20 orders × 5 states, shuffled, a fifth twice, one in twenty late: none lost, out of order or fulfilled twice.
  expect(result.keysAtScale).toEqual(expect.objectContaining({ events: 100, lost: 0, outOfOrder: 0, notFulfilledOnce: 0 }));
}, 240_000);
