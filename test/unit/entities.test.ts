import fc from 'fast-check';
import { compareVersions, isNewerVersion, nextTurns, oldestOf, storedBeyond, type Applied, type EntityOrder, type TurnRequest } from '../../contracts';

/**
 * The entity's decision (`nextTurns`), simulated over any arrival: events of one key come in
 * batches in any order, some twice, and each decision runs one event to its end before the next.
 */
const request = (eventId: string, version: TurnRequest['version']): TurnRequest => ({ eventId, workflowId: eventId, type: 'orders/updated', version });

/** Runs an entity's loop over arrivals: what it applied, in order, and what it superseded. */
function simulate(order: EntityOrder, arrivals: TurnRequest[][]) {
  const applied: TurnRequest[] = [];
  const superseded: Array<{ request: TurnRequest; after: Applied }> = [];
  let pending: TurnRequest[] = [];
  let last: Applied | null = null;
  const seen = new Set<string>();
  for (const batch of [...arrivals, []]) {
    for (const arrived of batch) {
      if (seen.has(arrived.eventId)) continue;
      pending.push(arrived);
      seen.add(arrived.eventId);
    }
    for (;;) {
      const next = nextTurns(order, pending, last);
      pending = next.waiting;
      superseded.push(...next.superseded);
      if (!next.go) break;
      applied.push(next.go);
      last = next.go;
      if (order !== 'serial' || batch.length === 0) continue;
      break;
    }
  }
  return { applied, superseded, pending };
}

const events = fc
  .uniqueArray(fc.record({ eventId: fc.stringMatching(/^evt_[a-z0-9]{1,6}$/), minute: fc.integer({ min: 0, max: 30 }) }), {
    minLength: 1,
    maxLength: 40,
    selector: (event) => event.eventId,
  })
  .map((list) => list.map(({ eventId, minute }) => request(eventId, [`2026-12-01T10:${String(minute).padStart(2, '0')}:00-05:00`])));
const arrivals = events.chain((list) =>
  fc
    .tuple(
      fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
      fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 40, maxLength: 40 }),
    )
    .map(([shuffled, sizes]) => {
      const batches: TurnRequest[][] = [];
      // A fifth come twice, in a later batch.
      const stream = [...shuffled, ...shuffled.filter((_, index) => index % 5 === 0)];
      for (let at = 0, index = 0; at < stream.length; at += sizes[index++ % sizes.length]!) batches.push(stream.slice(at, at + sizes[index % sizes.length]!));
      return { list, batches };
    }),
);

// A coalescing key decides as `latest` does, once its burst has gathered (its timing is the entity's: test/integration/entities.test.ts).
describe.each(['latest', 'coalesce'] as const)('%s', (order) => {
  it('never applies a version older than or equal to one applied before it, applies the newest, and settles every event once', () => {
    fc.assert(
      fc.property(arrivals, ({ list, batches }) => {
        const { applied, superseded, pending } = simulate(order, batches);
        for (let index = 1; index < applied.length; index++) expect(isNewerVersion(applied[index]!, applied[index - 1]!)).toBe(true);
        const settled = [...applied, ...superseded.map((each) => each.request)].map((each) => each.eventId).sort();
        expect(settled).toEqual(list.map((each) => each.eventId).sort());
        expect(pending).toEqual([]);
        const newest = [...list].sort(compareVersions).at(-1)!;
        // The newest content is applied: the newest event, or one of the same version applied before it.
        expect(applied.at(-1)!.version).toEqual(newest.version);
        // What superseded an event is never older than it.
        for (const { request: each, after } of superseded) expect(isNewerVersion(each, after)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('supersedes the same version under another event ID (Shopify: one body as orders/updated, then as orders/paid)', () => {
    const version = ['2026-12-01T10:00:00-05:00'];
    const first = nextTurns(order, [request('E1', version)], null);
    expect(first.go?.eventId).toBe('E1');
    expect(nextTurns(order, [request('E2', version)], first.go)).toEqual({
      go: null,
      superseded: [{ request: request('E2', version), after: first.go }],
      waiting: [],
    });
  });
});

describe('serial', () => {
  it('applies every event exactly once, and among those waiting together, the oldest first', () => {
    fc.assert(
      fc.property(arrivals, ({ list, batches }) => {
        const { applied, superseded } = simulate('serial', batches);
        expect(superseded).toEqual([]);
        expect(applied.map((each) => each.eventId).sort()).toEqual(list.map((each) => each.eventId).sort());
      }),
      { numRuns: 300 },
    );
    const waiting = ['10:05', '10:01', '10:03'].map((time, index) => request(`e${index}`, [`2026-12-01T${time}:00Z`]));
    expect(nextTurns('serial', waiting, null)).toMatchObject({ go: { eventId: 'e1' }, waiting: [{ eventId: 'e2' }, { eventId: 'e0' }] });
  });
});

describe('versions', () => {
  it('compare date-times as instants across offsets, numbers as numbers, and a missing version as the newest', () => {
    const at = (eventId: string, ...version: TurnRequest['version']) => ({ eventId, version });
    expect(compareVersions(at('a', '2026-12-01T10:00:00-05:00'), at('b', '2026-12-01T14:00:00Z'))).toBeGreaterThan(0);
    expect(compareVersions(at('a', 9), at('b', 10))).toBeLessThan(0);
    expect(compareVersions(at('a', 1), at('b', 1))).toBeLessThan(0);
    expect(isNewerVersion(at('b', 1), at('a', 1))).toBe(false);
    expect(isNewerVersion(at('x', null), at('a', 5))).toBe(true);
    expect(compareVersions(at('x'), at('a', 5))).toBeGreaterThan(0);
  });
});

describe('what a serial key keeps in its run (storedBeyond)', () => {
  it('keeps the oldest `keep` in arrival order and stores the rest, every one newer than every one kept', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 1_000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 30 }), (versions, keep) => {
        const pending = versions.map((version) => request(`evt_${version}`, [version]));
        const { kept, stored } = storedBeyond(pending, keep);
        expect(kept).toEqual(pending.filter((request) => kept.includes(request)));
        expect(kept).toHaveLength(Math.min(keep, pending.length));
        expect([...kept, ...stored].sort(compareVersions)).toEqual([...pending].sort(compareVersions));
        const newestKept = kept.reduce<TurnRequest | null>((newest, request) => (newest && compareVersions(newest, request) > 0 ? newest : request), null);
        if (newestKept) for (const request of stored) expect(compareVersions(request, newestKept)).toBeGreaterThan(0);
        expect(oldestOf(stored)).toEqual(stored.length === 0 ? null : [...stored].sort(compareVersions)[0]);
      }),
    );
  });
});
