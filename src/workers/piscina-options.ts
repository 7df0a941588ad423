import { extname, resolve } from 'node:path';
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
  // The threads lower their own priority once their code is loaded (thread-entry).
  // Piscina hands the same workerData to every thread it spawns, and Node copies it (structured
  // clone, which reads getters) as it constructs the thread: so `spawnedAt` is each thread's own
  // spawn time, the start of its thread start duration.
  const workerData: ThreadData = {
    taskModules,
    niceIncrement,
    get spawnedAt() {
      return preciseNow();
    },
  };
  return {
    filename: resolve(__dirname, `thread-entry${extension}`),
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
    resourceLimits:
      maxOldGenerationMb === undefined ? undefined : { maxOldGenerationSizeMb: maxOldGenerationMb },
    loadBalancer,
    workerData,
    recordTiming: false,
  };
}
