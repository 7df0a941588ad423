import { availableParallelism, totalmem } from 'node:os';
import { constrainedMemory } from 'node:process';
import { taskModulePath, type TaskModule } from '../tasks/task-registry';
import type { PoolHost, PoolSettings } from './pool-settings';
import { maxQueueForMemory } from './queue-bound';

/**
 * What `createPool` takes. Every field but `tasks` has a default; the
 * corepool service sets each from an environment variable (named beside it).
 */
export interface PoolOptions extends PoolHost {
  /** Task modules: paths (absolute, or from the working directory) or `file:` URLs. */
  readonly tasks: readonly TaskModule[];
  /** Worker threads (`POOL_THREADS`). Default: the cores Node may use. 0 runs tasks inline. */
  readonly threads?: number;
  /** Deadline of a task whose caller gives none, and the cap of one it gives (ms, `TASK_TIMEOUT_MS`). Default 30 000. */
  readonly taskTimeoutMs?: number;
  /**
   * Tasks waiting at most (`POOL_MAX_QUEUE`): a memory bound, not the admission rule. Default:
   * what a sixteenth of the memory the process may use holds at 16 KiB a task, ≥ 128 per thread.
   */
  readonly maxQueue?: number;
  /** V8 heap cap of each thread (MB, `WORKER_MAX_OLD_GENERATION_MB`). Default 0: Node's own. */
  readonly maxOldGenerationMb?: number;
  /** Recycle a thread after about this many tasks (`WORKER_MAX_TASKS`). Default 0: never. */
  readonly maxTasksPerThread?: number;
  /** Recycle a thread whose heap after a task passes this (MB, `WORKER_RECYCLE_HEAP_MB`). Default 0: never. */
  readonly recycleHeapMb?: number;
  /** Heap and buffers a thread may use during a task (MB, `WORKER_MAX_MEMORY_MB`). Default 0: not watched. */
  readonly maxMemoryMb?: number;
  /** How long a cancelled task has to return before its thread is stopped (ms, `CANCEL_GRACE_MS`). Default 300. */
  readonly cancelGraceMs?: number;
  /** Added to the threads' nice value so the event loop wins the CPU (Linux, `WORKER_NICE_INCREMENT`). Default 19. */
  readonly niceIncrement?: number;
  /** How long `close()` lets accepted tasks finish before it cancels them (ms, `SHUTDOWN_TIMEOUT_MS`). Default 25 000. */
  readonly closeTimeoutMs?: number;
  /** The scheduler's tuning (`SCHEDULER_*`); the defaults suit tasks of a millisecond to minutes. */
  readonly scheduler?: Partial<PoolSettings['scheduler']>;
}

/** The defaults `PoolOptions` names. */
export const POOL_DEFAULTS = {
  taskTimeoutMs: 30_000,
  maxOldGenerationMb: 0,
  maxTasksPerThread: 0,
  recycleHeapMb: 0,
  maxMemoryMb: 0,
  cancelGraceMs: 300,
  niceIncrement: 19,
  closeTimeoutMs: 25_000,
  scheduler: {
    targetDelayMs: 100,
    intervalMs: 500,
    costPriorMs: 50,
    batchMaxTasks: 8,
    batchMaxMs: 2,
  },
} as const;

/** `options` with every default filled in, checked: a bad value throws a `RangeError` naming it. */
export function poolSettings(options: PoolOptions): PoolSettings {
  if (!Array.isArray(options?.tasks)) {
    throw new TypeError('createPool: `tasks` must be an array of module paths or file: URLs');
  }
  const threads = whole('threads', options.threads ?? availableParallelism(), 0);
  const scheduler = { ...POOL_DEFAULTS.scheduler, ...options.scheduler };
  const memory = constrainedMemory() || totalmem();
  return {
    pool: {
      threads,
      maxQueue: whole('maxQueue', options.maxQueue ?? maxQueueForMemory(memory, threads), 1),
      taskTimeoutMs: whole(
        'taskTimeoutMs',
        options.taskTimeoutMs ?? POOL_DEFAULTS.taskTimeoutMs,
        1,
      ),
      maxOldGenerationMb: whole('maxOldGenerationMb', options.maxOldGenerationMb ?? 0, 0),
      maxTasksPerThread: whole('maxTasksPerThread', options.maxTasksPerThread ?? 0, 0),
      recycleHeapMb: whole('recycleHeapMb', options.recycleHeapMb ?? 0, 0),
      maxMemoryMb: whole('maxMemoryMb', options.maxMemoryMb ?? 0, 0),
      cancelGraceMs: whole(
        'cancelGraceMs',
        options.cancelGraceMs ?? POOL_DEFAULTS.cancelGraceMs,
        0,
      ),
      niceIncrement: whole(
        'niceIncrement',
        options.niceIncrement ?? POOL_DEFAULTS.niceIncrement,
        0,
      ),
      taskModules: options.tasks.map(taskModulePath),
    },
    scheduler: {
      targetDelayMs: whole('scheduler.targetDelayMs', scheduler.targetDelayMs, 1),
      intervalMs: whole('scheduler.intervalMs', scheduler.intervalMs, 1),
      costPriorMs: whole('scheduler.costPriorMs', scheduler.costPriorMs, 0),
      jobsMaxThreads: whole(
        'scheduler.jobsMaxThreads',
        scheduler.jobsMaxThreads ?? Math.max(1, threads),
        1,
      ),
      batchMaxTasks: whole('scheduler.batchMaxTasks', scheduler.batchMaxTasks, 1),
      batchMaxMs: number('scheduler.batchMaxMs', scheduler.batchMaxMs, 0),
    },
    shutdown: {
      timeoutMs: whole('closeTimeoutMs', options.closeTimeoutMs ?? POOL_DEFAULTS.closeTimeoutMs, 0),
    },
  };
}

function number(name: string, value: number, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new RangeError(`createPool: \`${name}\` must be a number ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

function whole(name: string, value: number, min: number): number {
  if (!Number.isInteger(number(name, value, min))) {
    throw new RangeError(`createPool: \`${name}\` must be a whole number, got ${value}`);
  }
  return value;
}
