// `npm run check:cycles`: any import cycle in src/ or packages/ fails the check, and so does an
// import across the layers below or across the package boundary (PACKAGE_RULES). Type-only imports count too (`tsPreCompilationDeps`): a cycle
// or a layer crossed through types is still a knot in the design. docs/architecture.md's
// table of layers is generated from LAYERS (`npm run docs:layers`; a test compares them).

/**
 * The folders of src/ and, for each, the other folders its modules may import. The
 * composition root (src/*.ts: main.ts, create-app.ts, app.module.ts) may import any of
 * them and none imports it. Specs (`*.spec.ts`) may reach across: a test puts parts
 * together. A folder of src/ missing here fails the docs test.
 */
const LAYERS = {
  // composition of the primary process
  cluster: ['auth', 'config', 'jobs', 'lifecycle', 'metrics'],
  // edge: routes, probes, metrics, logs, drain
  compute: ['auth', 'common', 'config', 'http', 'tasks', 'workers'],
  health: ['auth', 'common', 'config', 'http', 'jobs', 'lifecycle', 'metrics', 'workers'],
  metrics: ['auth', 'common', 'config', 'http', 'tasks', 'tracing', 'workers'],
  logging: ['auth', 'config', 'http', 'tracing'],
  lifecycle: ['cluster', 'common', 'config', 'workers'],
  // edge kit
  http: ['auth', 'common', 'tasks', 'tracing'],
  // jobs, and the service's side of the engine (the engine itself is @corepool/core)
  jobs: ['auth', 'common', 'config', 'http', 'lifecycle', 'metrics', 'tasks', 'tracing', 'workers'],
  // observes the pool as metrics/ does: reads the threads' span records (@corepool/core/host)
  tracing: ['common', 'config'],
  // the engine's module with the service's configuration, tasks and thread bundle
  workers: ['config', 'tasks'],
  // leaves
  auth: ['common', 'config'],
  config: [],
  common: [],
  tasks: [],
  runtime: [],
};

/**
 * The package boundary: the engine (packages/core) knows no framework and nothing of the
 * packages or the service above it; the Nest module (packages/nestjs) knows the engine
 * only by its package name; the service uses both by name, never by a path into them.
 */
const PACKAGE_RULES = [
  {
    name: 'core-no-framework',
    severity: 'error',
    comment: '@corepool/core imports no web framework, no Prometheus client, no OpenTelemetry',
    from: { path: '^packages/core/src/', pathNot: '[.]spec[.]ts$' },
    to: { path: 'node_modules/(@nestjs|fastify|@fastify|express|prom-client|@opentelemetry)/' },
  },
  {
    name: 'core-stands-alone',
    severity: 'error',
    comment: '@corepool/core imports nothing of the Nest module or the service',
    from: { path: '^packages/core/src/', pathNot: '[.]spec[.]ts$' },
    to: { path: '^(src|packages/nestjs)/' },
  },
  {
    name: 'nestjs-above-core',
    severity: 'error',
    comment: '@corepool/nestjs imports nothing of the service',
    from: { path: '^packages/nestjs/src/', pathNot: '[.]spec[.]ts$' },
    to: { path: '^src/' },
  },
  {
    name: 'packages-by-name',
    severity: 'error',
    comment: 'the service imports the packages by name (their exports), never a path into them',
    from: { path: '^src/' },
    to: { path: '^packages/[^/]+/src/' },
  },
];

/**
 * Imports LAYERS forbids that the code still has, by folder: each is left out of its
 * folder's rule and has a rule of its own at severity `ignore`, to be set to `error`
 * (and the entry removed) once the code is changed. None now: workers/ reaches tracing
 * through its own hook (`workers/task-tracer.ts`), which tracing/ registers itself in.
 */
const NOT_YET_ENFORCED = {};

const asFolders = (names) => names.map((name) => `${name}/`).join(', ');

const layerRules = ([folder, allowed]) => {
  const pending = NOT_YET_ENFORCED[folder] ?? {};
  return [
    {
      name: `layer-${folder}`,
      severity: 'error',
      comment:
        allowed.length === 0
          ? `${folder}/ imports no other folder of src/`
          : `${folder}/ imports only ${asFolders(allowed)} of src/`,
      from: { path: `^src/${folder}/`, pathNot: '[.]spec[.]ts$' },
      to: {
        path: '^src/',
        pathNot: `^src/(${[folder, ...allowed, ...Object.keys(pending)].join('|')})/`,
      },
    },
    ...Object.entries(pending).map(([target, reason]) => ({
      name: `layer-${folder}-not-${target}`,
      severity: 'ignore',
      comment: `${folder}/ must not import ${target}/; not yet enforced: ${reason}`,
      from: { path: `^src/${folder}/`, pathNot: '[.]spec[.]ts$' },
      to: { path: `^src/${target}/` },
    })),
  ];
};

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
    ...Object.entries(LAYERS).flatMap(layerRules),
    ...PACKAGE_RULES,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
  },
};
