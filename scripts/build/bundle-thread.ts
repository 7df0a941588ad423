/**
 * Bundles the thread entry (src/workers/thread-entry.ts, the task files it
 * imports and the engine's thread code from packages/core/src) into one file, dist/workers/thread-bundle.js, which the pool's
 * threads load instead of dist/workers/thread-entry.js
 * (src/workers/thread-file.ts). One file to find, read and compile instead
 * of ~20 cut a thread's start by ~3 ms of CPU, and with the compile cache by
 * ~10 ms (ADR 0019).
 *
 * From the TypeScript sources, not from tsc's CommonJS output: esbuild then
 * hoists every module into the file's top level instead of wrapping each in a
 * function that V8 compiles lazily, on first call. Node's compile cache holds
 * only code compiled along with the file, so the wrapped modules were compiled
 * again in every thread; hoisted, loading the code fell from ~2.9 to ~1.7 ms
 * (ADR 0021). esbuild compiles each file on its own, as `isolatedModules`
 * (tsconfig.json) already requires of them.
 *
 * Packages stay outside the bundle: Piscina's main module and unpdf are loaded
 * on first use only, and Node's built-in modules are never bundled.
 *
 *   npm run build      # nest build, then this
 */
import { build } from 'esbuild';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

build({
  entryPoints: [join(ROOT, 'src', 'workers', 'thread-entry.ts')],
  outfile: join(ROOT, 'dist', 'workers', 'thread-bundle.js'),
  tsconfig: join(ROOT, 'tsconfig.build.json'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  packages: 'external',
  // The engine's thread code goes into the bundle from its sources, like the service's own.
  alias: {
    '@corepool/core/thread': join(ROOT, 'packages', 'core', 'src', 'thread.ts'),
    '@corepool/core/task': join(ROOT, 'packages', 'core', 'src', 'task.ts'),
  },
  // Names stay readable in stack traces; minifying saved nothing measurable.
  minify: false,
  sourcemap: 'linked',
  logLevel: 'warning',
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
