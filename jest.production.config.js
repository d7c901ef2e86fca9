/**
 * `npm run test:production`: the production topology (test/production) on the pinned Temporal
 * server with PostgreSQL. It starts its own cluster, processes and PostgreSQL, so it needs no global
 * Temporal dev server. Two files at a time, each with its topology: the longest (inbox.test.ts)
 * spends a minute waiting out a Temporal outage, while the others run beside it.
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
  maxWorkers: 2,
};
