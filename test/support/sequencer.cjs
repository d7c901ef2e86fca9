// Jest's order, except that test files needing a Go-built tool (goTool in test/support/go-tools.ts,
// startMailpit, startStripeMock) run last: `.ci/run` builds those tools beside the suite, and a
// file that reaches one before its build ends waits for it.
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const NEEDS_GO_TOOL = /\b(goTool|startMailpit|startStripeMock)\(/;

class GoToolsLast extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const needs = (test) => NEEDS_GO_TOOL.test(readFileSync(test.path, 'utf8'));
    return [...sorted.filter((test) => !needs(test)), ...sorted.filter(needs)];
  }
}

module.exports = GoToolsLast;
