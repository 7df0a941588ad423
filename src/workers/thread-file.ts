import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';

/**
 * The file the service's threads load: built code has the thread entry
 * (`thread-entry.ts`: the engine's thread code and the built-in tasks) bundled
 * into one file (`npm run build`, scripts/build/bundle-thread.ts), which
 * starts a thread faster than the ~20 files it is made of (ADR 0019); the
 * plain entry is the fallback for a build without it, and TypeScript (tsx,
 * in development and jest) has only the entry.
 */
export function serviceThreadFile(sourceFile: string = __filename): string {
  const extension = extname(sourceFile);
  const entry = resolve(__dirname, `thread-entry${extension}`);
  const bundle = resolve(__dirname, 'thread-bundle.js');
  // A bundle older than the entry is left over from an earlier build (`tsc` alone rebuilds only the entry).
  const current = extension === '.js' && existsSync(bundle) && mtime(bundle) >= mtime(entry);
  return current ? bundle : entry;
}

const mtime = (file: string): number => (existsSync(file) ? statSync(file).mtimeMs : Infinity);
