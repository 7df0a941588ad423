import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import type { Piscina } from 'piscina';
import type { PoolSettings } from './pool-settings';
import type { ThreadData } from './thread-handlers';
import { preciseNow } from './task-runner';

export type PiscinaOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;
type LoadBalancer = NonNullable<PiscinaOptions['loadBalancer']>;

/**
 * Piscina's options for corepool's pool: a fixed number of threads, one task
 * each, and `threadFile` for their code (`defaultThreadFile()` unless the host
 * brings its own entry). A TypeScript entry (development, jest) is compiled by
 * the threads with tsx; built code loads JavaScript.
 */
export function piscinaOptions(
  pool: PoolSettings['pool'],
  loadBalancer: LoadBalancer,
  threadFile: string = defaultThreadFile(),
): PiscinaOptions {
  const { threads, maxQueue, maxOldGenerationMb, niceIncrement, taskModules } = pool;
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
    filename: threadFile,
    env: threadEnv(),
    execArgv: extname(threadFile) === '.ts' ? ['--require', require.resolve('tsx/cjs')] : undefined,
    minThreads: threads,
    // One above the size: a recycled thread's replacement starts before it retires (thread-recycler).
    maxThreads: threads + 1,
    // Threads are started warm and kept: an idle timeout would make the next burst pay for startup.
    idleTimeout: Infinity,
    // Tasks queue in the dispatcher; Piscina's queue only holds the few that
    // wait for a thread being replaced, and its limit is a backstop.
    maxQueue: Math.max(1, maxQueue),
    concurrentTasksPerWorker: 1,
    // 0: V8's own heap limit for a thread.
    resourceLimits:
      maxOldGenerationMb > 0 ? { maxOldGenerationSizeMb: maxOldGenerationMb } : undefined,
    loadBalancer,
    workerData,
    recordTiming: false,
  };
}

/**
 * The core's own thread entry, beside this file: it loads the task modules
 * the pool was given. `sourceFile` is this module's own file, TypeScript when
 * run from source.
 */
export const defaultThreadFile = (sourceFile: string = __filename): string =>
  resolve(__dirname, `thread-entry${extname(sourceFile)}`);

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
