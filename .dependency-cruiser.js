// `npm run check:cycles`: any import cycle in src/ fails the check. Type-only
// imports count too (`tsPreCompilationDeps`): a cycle through types is still
// a knot in the design (docs/architecture.md).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: one module of it must stop depending on the other.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
  },
};
