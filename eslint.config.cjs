// CommonJS so tests can load it with require() and hand it to the ESLint API.
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const importX = require('eslint-plugin-import-x');
const { createTypeScriptImportResolver } = require('eslint-import-resolver-typescript');
// Which folder may import which: contracts/ is loaded into the workflow sandbox, workflows/ sees only
// the contracts, activities/ implement them with src/, and src/ wires activities/ in one place.
// Outside the worker's bundle, only src/flows.ts loads workflows/: the flow declarations, from which
// everything else takes its flows.
// Shipped code (what the image builds) never reaches into test/: the Dockerfile never copies it.
const noTestImports = {
  group: ['**/test', '**/test/**'],
  message: 'Shipped code never imports test/; shared helpers live under src/ (development stand-ins in src/dev/).',
};
const noWorkflowImports = {
  group: ['**/workflows', '**/workflows/**'],
  message: 'Only src/flows.ts loads workflows/ (the flow declarations); import flows from there, and names, definitions and types from contracts/.',
};
const noActivityImports = { group: ['**/activities', '**/activities/**'], message: 'Only src/services.ts wires activities/; share types through contracts/.' };
const sandboxOnly = (allowed, message) => ({ regex: `^(?!(${allowed.join('|')})$)`, message });

// The layers inside src/ (docs/architecture.md#layers-inside-src), lowest first: a folder or file
// imports only from the layers below its own, never from above nor from another part of its own.
const LAYERS = [
  ['src/core'],
  ['src/db', 'src/email'],
  ['src/flows.ts'],
  ['src/providers'],
  ['src/config'],
  ['src/temporal', 'src/outbound'],
  ['src/intake'],
  ['src/backfill'],
  ['src/operator'],
  ['src/http', 'src/cluster', 'src/dev'],
  ['src/cli', 'src/services.ts'],
  ['src/receiver.ts', 'src/worker.ts', 'src/temporal-server.ts', 'src/temporal-cluster.ts', 'src/build-workflow-bundle.ts'],
  ['src/dev.ts'],
];
const layerZones = LAYERS.flatMap((layer, level) =>
  layer.map((part) => ({
    target: `./${part}`,
    from: [...layer.filter((other) => other !== part), ...LAYERS.slice(level + 1).flat()].map((other) => `./${other}`),
    message: `${part} is in layer ${level + 1} of docs/architecture.md#layers-inside-src: it imports only from the layers below it.`,
  })),
).filter((zone) => zone.from.length > 0);

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
    // The console's one browser script, served as it is.
    files: ['src/http/console/assets/*.js'],
    languageOptions: { sourceType: 'script', globals: { document: 'readonly', window: 'readonly', fetch: 'readonly', setTimeout: 'readonly' } },
  },
  {
    files: ['*.js', '*.cjs', 'test/support/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    // Cycles, type-only ones included, are dependency-cruiser's (.dependency-cruiser.cjs, in npm run lint).
    rules: { 'import-x/no-restricted-paths': ['error', { zones: layerZones }] },
  },
  {
    // A file says one thing: at most 300 lines (the migrations are a list, kept in order in one place).
    files: ['src/**/*.ts', 'src/**/*.tsx', 'activities/**/*.ts', 'workflows/**/*.ts', 'contracts/**/*.ts'],
    ignores: ['src/db/migrations.ts'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
  {
    // Routers are small: a route group per module, each handler a function (the console's pages are markup, not routes).
    files: ['src/http/**/*.ts', 'src/http/**/*.tsx'],
    ignores: ['src/http/console/pages/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: ['src/services.ts', 'src/flows.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTestImports, noWorkflowImports, noActivityImports] }] },
  },
  {
    files: ['src/services.ts', 'activities/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTestImports, noWorkflowImports] }] },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            sandboxOnly(
              ['@temporalio/workflow', '@temporalio/common', '\\./[\\w-]+'],
              'contracts/ runs in the workflow sandbox: it imports only @temporalio/workflow, @temporalio/common and its own files.',
            ),
          ],
        },
      ],
    },
  },
  {
    // Workflow code is replayed and must be deterministic: no Node modules, no I/O, no clock or
    // randomness outside the SDK's replacements.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            sandboxOnly(
              ['@temporalio/workflow', '\\.\\./contracts', '\\./[\\w-]+'],
              'Workflows import only @temporalio/workflow, ../contracts and each other; do I/O in an activity, named in contracts/activities.ts.',
            ),
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
