/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/production runs on its own (npm run test:production): a Temporal cluster and processes.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/production/'],
  // Octokit and the packages it uses ship only ES modules; compile them to CommonJS with the tests.
  // So do @linear/sdk and svix (whose library signs the tests' Svix deliveries).
  // The console's pages are TSX, rendered by React on the server.
  transform: {
    '^.+\\.(tsx?|js|mjs)$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic' } } }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(@marcbachmann|@octokit|universal-user-agent|before-after-hook|json-with-bigint|fast-content-type-parse|content-type|@linear|svix|standardwebhooks)/)',
  ],
  // Their package exports offer only an `import` condition, which Jest's CommonJS resolver skips.
  moduleNameMapper: {
    '^@octokit/webhooks-methods$': '<rootDir>/node_modules/@octokit/webhooks-methods/dist-node/index.js',
    '^@linear/sdk/webhooks$': '<rootDir>/node_modules/@linear/sdk/dist/webhooks/index.mjs',
    '^svix$': '<rootDir>/node_modules/svix/dist/index.mjs',
  },
  setupFiles: ['<rootDir>/test/support/quiet-runtime.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Integration tests run workers and Temporal dev servers on a 2-core machine.
  testTimeout: 60_000,
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
};
