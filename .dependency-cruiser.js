// `npm run check:cycles`: any import cycle in src/ fails the check, and so does an import
// across the layers below. Type-only imports count too (`tsPreCompilationDeps`): a cycle
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
  health: [
    'auth',
    'common',
    'config',
    'http',
    'jobs',
    'lifecycle',
    'metrics',
    'scheduler',
    'workers',
  ],
  metrics: ['auth', 'common', 'config', 'http', 'scheduler', 'tasks', 'tracing', 'workers'],
  logging: ['auth', 'config', 'http', 'tracing'],
  lifecycle: ['cluster', 'common', 'config', 'workers'],
  // edge kit
  http: ['auth', 'common', 'tasks', 'tracing'],
  // core
  jobs: ['auth', 'common', 'config', 'http', 'lifecycle', 'metrics', 'tasks', 'tracing', 'workers'],
  // observes the pool as metrics/ does: reads the threads' span records and priority
  tracing: ['common', 'config', 'workers'],
  workers: ['auth', 'common', 'config', 'scheduler', 'tasks'],
  scheduler: ['auth', 'common'],
  // leaves
  auth: ['common', 'config'],
  config: [],
  common: ['tasks'],
  tasks: [],
  runtime: [],
};

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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
  },
};
