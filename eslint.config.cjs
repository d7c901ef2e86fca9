// CommonJS so tests can load it with require() and hand it to the ESLint API.
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];
// Shipped code (what the image builds) must not reach into test/: the Dockerfile never copies it.
const noTestImports = { group: ['**/test', '**/test/**'], message: 'Shipped code never imports test/; shared helpers live under src/ (development stand-ins in src/dev/).' };
const ioPackages = ['pg', 'stripe', 'express', 'resend', 'nodemailer', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'];

module.exports = tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.tools/', '.data/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['*.js', '*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts', 'activities/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTestImports] }] },
  },
  {
    // Workflow code is replayed and must be deterministic: no Node modules, no I/O, no clock or
    // randomness outside the SDK's replacements. Activities are imported as types only.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflows cannot use Node modules; do I/O in an activity.' })),
            ...ioPackages.map((name) => ({ name, message: 'Workflows cannot do I/O; call an activity instead.' })),
          ],
          patterns: [
            noTestImports,
            { group: ['../src', '../src/*'], message: 'Workflows import only @temporalio/workflow and types.', allowTypeImports: true },
            { group: ['../activities', '../activities/*'], message: "Import activities as types: import type { Activities } from '../activities'.", allowTypeImports: true },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Workflows cannot read the environment; pass values as workflow arguments.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'fetch', message: 'Workflows cannot do I/O; call an activity instead.' },
        { name: 'require', message: 'Workflows import only @temporalio/workflow and types.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Pass timestamps in as arguments, or use workflowInfo() times.' },
        { object: 'Math', property: 'random', message: 'Use uuid4() from @temporalio/workflow.' },
      ],
    },
  },
);
