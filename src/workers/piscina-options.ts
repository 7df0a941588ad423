import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import type { Piscina } from 'piscina';
import type { AppConfig } from '../config/app-config';
import type { ThreadData } from './thread-entry';
import { preciseNow } from './task-runner';

export type PiscinaOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;
type LoadBalancer = NonNullable<PiscinaOptions['loadBalancer']>;

/**
 * Piscina's options for corepool's pool: a fixed number of threads, one task
 * each, and the thread entry beside this file. `sourceFile` is the caller's
 * `__filename`: in development and in jest it is TypeScript, and so is the
 * entry, which the threads then compile with tsx; built code loads JavaScript.
 */
export function piscinaOptions(
  pool: AppConfig['pool'],
  loadBalancer: LoadBalancer,
  sourceFile: string = __filename,
): PiscinaOptions {
  const { threads, maxQueue, maxOldGenerationMb, niceIncrement, taskModules } = pool;
  const extension = extname(sourceFile);
  // The threads lower their own priority with their first task (thread-entry).
  // Piscina hands the same workerData to every thread it spawns, and Node copies it (structured
  // clone, which reads getters) as it constructs the thread: so `spawnedAt` is each thread's own
  // spawn time, the start of its thread start duration; and only the first thread is asked to
  // write Node's compile cache.
  let first = true;
  const workerData: ThreadData = {
    taskModules,
    niceIncrement,
    get spawnedAt() {
      return preciseNow();
    },
    get flushCompileCache() {
      const flush = first;
      first = false;
      return flush;
    },
  };
  return {
    filename: threadFile(extension),
    env: threadEnv(),
    execArgv: extension === '.ts' ? ['--require', require.resolve('tsx/cjs')] : undefined,
    minThreads: threads,
    // One above the size: a recycled thread's replacement starts before it retires (thread-recycler).
    maxThreads: threads + 1,
    // Threads are started warm and kept: an idle timeout would make the next burst pay for startup.
    idleTimeout: Infinity,
    // Tasks queue in the dispatcher; Piscina's queue only holds the few that
    // wait for a thread being replaced, and its limit is a backstop.
    maxQueue: Math.max(1, maxQueue),
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxOldGenerationSizeMb: maxOldGenerationMb },
    loadBalancer,
    workerData,
    recordTiming: false,
  };
}

/**
 * The file a thread loads: built code has the thread entry bundled into one
 * file (`npm run build`, scripts/build/bundle-thread.ts), which starts a thread
 * faster than the ~20 files it is made of; the plain entry is the fallback for
 * a build without it, and TypeScript (tsx) has only the entry.
 */
function threadFile(extension: string): string {
  const entry = resolve(__dirname, `thread-entry${extension}`);
  const bundle = resolve(__dirname, 'thread-bundle.js');
  // A bundle older than the entry is left over from an earlier build (`tsc` alone rebuilds only the entry).
  const current = extension === '.js' && existsSync(bundle) && mtime(bundle) >= mtime(entry);
  return current ? bundle : entry;
}

const mtime = (file: string): number => (existsSync(file) ? statSync(file).mtimeMs : Infinity);

/**
 * The threads' environment: the process's own (Node's default for a thread),
 * plus Node's compile cache for the code they load unless the process says
 * otherwise. A thread then reads V8's compiled code from the cache instead of
 * compiling its code again, a share of each thread's start (ADR 0019). Node
 * writes the cache when a thread first loads code it has not cached yet and
 * checks each entry against the file's contents; it skips the cache silently
 * when the directory is not writable. `NODE_COMPILE_CACHE` (a directory) or
 * `NODE_DISABLE_COMPILE_CACHE=1` in the process's environment take precedence
 * (the threads then get Node's default, a copy of the process's environment).
 */
export function threadEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv | undefined {
  if (env.NODE_COMPILE_CACHE !== undefined || env.NODE_DISABLE_COMPILE_CACHE !== undefined) {
    return undefined;
  }
  return { ...env, NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache') };
}
