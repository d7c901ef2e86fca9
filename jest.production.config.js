/**
 * `npm run test:production`: the production topology (test/production) on the pinned Temporal
 * server with PostgreSQL. It starts its own cluster, processes and PostgreSQL, so it needs no global
 * Temporal dev server; one file at a time, as each runs a whole topology on a 2-core machine.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/production'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 180_000,
  maxWorkers: 1,
};
