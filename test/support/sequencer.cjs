const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The longest files first, so that no worker idles at the end of a run while the other finishes a
 * minute-long file. Jest orders by the last run's times, which a fresh clone (CI) does not have, and
 * else by file size, which put the bench's minute last. This orders by folder, what a file runs
 * deciding more than its size (a browser, a dev server, the bench: about a minute; a unit file: a
 * second), then by size. The files that use a Go-built tool (Mailpit, stripe-mock, Helm:
 * test/support/go-tools.ts) come last: on a new machine `.ci/run` builds those beside the suite, and
 * a file run first would hold a worker while it waits for the build.
 */
const SLOWEST_FIRST = ['/test/e2e/', '/test/integration/', '/test/fuzz/', '/test/http/', '/test/repository/'];
/**
 * Files that wait out real time, far longer than their size says: first of all. The production
 * suite's inbox test waits out a minute of Temporal outage (about two minutes in all); started after
 * the cluster test, as its size put it, it ran alone for the last minute of the suite.
 */
const LONGEST = ['/test/production/inbox.test.ts'];
const USES_GO_TOOL = /support\/(go-tools|mailpit|stripe-mock)'/;

class LongestFirst extends Sequencer {
  sort(tests) {
    const usesGoTool = new Map(tests.map((test) => [test.path, USES_GO_TOOL.test(readFileSync(test.path, 'utf8'))]));
    const rank = (test) => {
      if (LONGEST.some((file) => test.path.endsWith(file))) return -1;
      const folder = SLOWEST_FIRST.findIndex((prefix) => test.path.includes(prefix));
      return (usesGoTool.get(test.path) ? SLOWEST_FIRST.length + 1 : 0) + (folder === -1 ? SLOWEST_FIRST.length : folder);
    };
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    return [...tests].sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
  }
}

module.exports = LongestFirst;
