import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const GoToolsLast = require('../support/sequencer.cjs');

it('runs the test files that need a Go-built tool after all the others, keeping the order of each group', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sequencer-'));
  const file = (name: string, body: string) => {
    const at = path.join(dir, name);
    writeFileSync(at, body);
    return { path: at, context: { config: { cacheDirectory: dir, rootDir: dir, id: 'unit' }, hasteFS: { getSize: () => body.length } } };
  };
  const tests = [
    file('chart.test.ts', "beforeAll(() => { HELM = goTool('helm'); });"),
    file('a.test.ts', 'it("adds", () => expect(1 + 1).toBe(2));'),
    file('mail.test.ts', 'beforeAll(async () => { mailpit = await startMailpit(); });'),
    file('b.test.ts', 'it("names goTool without calling it", () => undefined);'),
    file('stripe.test.ts', 'mock = await startStripeMock();'),
  ];
  const order = new GoToolsLast({ contexts: [], globalConfig: {} }).sort(tests).map((test: { path: string }) => path.basename(test.path));
  expect(order.slice(0, 2).sort()).toEqual(['a.test.ts', 'b.test.ts']);
  expect(order.slice(2).sort()).toEqual(['chart.test.ts', 'mail.test.ts', 'stripe.test.ts']);
});
