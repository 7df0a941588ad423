/**
 * Bundles the built thread entry (dist/workers/thread-entry.js and the task
 * files it imports) into one file, dist/workers/thread-bundle.js, which the
 * pool's threads load instead (src/workers/piscina-options.ts). One file to
 * find, read and compile instead of ~20 cut a thread's start by ~3 ms of CPU,
 * and with the compile cache by ~10 ms (ADR 0019).
 *
 * Packages stay outside the bundle: Piscina's main module and unpdf are loaded
 * on first use only, and Node's built-in modules are never bundled.
 *
 *   npm run build      # nest build, then this
 */
import { build } from 'esbuild';
import { join } from 'node:path';

const WORKERS = join(__dirname, '..', '..', 'dist', 'workers');

build({
  entryPoints: [join(WORKERS, 'thread-entry.js')],
  outfile: join(WORKERS, 'thread-bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  packages: 'external',
  // Names stay readable in stack traces; minifying saved nothing measurable.
  minify: false,
  sourcemap: 'linked',
  logLevel: 'warning',
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
