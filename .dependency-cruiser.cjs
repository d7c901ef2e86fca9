// `npm run lint` runs this beside ESLint: no import cycle inside src/, of values or of types only
// (ESLint's import-x/no-cycle skips type-only imports, and a cycle of types still ties two modules
// into one). Which folder may import which is ESLint's (eslint.config.cjs, LAYERS).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules inside src/ import each other one way only (docs/architecture.md#layers-inside-src).',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|test|workflows|activities|contracts)/' },
    // Type-only imports count: they are edges of the graph as much as value imports.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
