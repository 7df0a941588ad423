import type { TaskDefinition } from '../tasks/task-definition';

/**
 * Everything the pool runs by, resolved: `createPool` fills these from its
 * options and their defaults (`pool-options.ts`); a host that reads its own
 * configuration (the corepool service reads the environment) may hand in its
 * own object of this shape.
 */
export interface PoolSettings {
  readonly pool: {
    /** Worker threads; 0 runs tasks inline on the event loop (for comparison only). */
    readonly threads: number;
    /** Tasks that may wait for a thread at once: a memory bound, not the admission rule. */
    readonly maxQueue: number;
    /** Deadline of a task whose caller gives none, and the cap of the caller's own (ms). */
    readonly taskTimeoutMs: number;
    /** V8 heap cap of each thread (MB). */
    readonly maxOldGenerationMb: number;
    /** Recycle a thread after about this many tasks; 0 never does. */
    readonly maxTasksPerThread: number;
    /** Recycle a thread whose heap in use after a task exceeds this (MB); 0 never does. */
    readonly recycleHeapMb: number;
    /** Heap and external memory a thread may use while it runs a task (MB); 0: not watched. */
    readonly maxMemoryMb: number;
    /** Time a cancelled task has to return before its thread is terminated (ms). */
    readonly cancelGraceMs: number;
    /** Added to the threads' nice value, so the event loop wins the CPU (Linux). */
    readonly niceIncrement: number;
    /** Task modules (absolute paths) the threads load. */
    readonly taskModules: readonly string[];
  };
  readonly scheduler: {
    /** CoDel's target queue delay under overload (ms). */
    readonly targetDelayMs: number;
    /** How long the delay stays above the target before the queue is overloaded (ms). */
    readonly intervalMs: number;
    /** Estimated run time of a task never measured (ms). */
    readonly costPriorMs: number;
    /** Threads the jobs' client (`JOBS_CLIENT_KEY`) may hold at once. */
    readonly jobsMaxThreads: number;
    /** Most small tasks one thread takes in one message; 1: no batches. */
    readonly batchMaxTasks: number;
    /** Estimated thread time of one batch (ms): only tasks this short are batched. */
    readonly batchMaxMs: number;
  };
  readonly shutdown: {
    /** How long `close()` lets accepted tasks finish before it cancels them (ms). */
    readonly timeoutMs: number;
  };
}

/**
 * Where the pool's few log lines go: Nest's `Logger` (and nestjs-pino's), and
 * `console` fit. A line about one task comes as an object of its ids
 * (`reqId`, `trace_id`, `span_id`) and then the message, as pino takes them.
 */
export interface PoolLogger {
  log(message: unknown, ...optionalParams: unknown[]): void;
  warn(message: unknown, ...optionalParams: unknown[]): void;
  error(message: unknown, ...optionalParams: unknown[]): void;
}

/** How the pool is hosted: where its lines go, and the file its threads load. */
export interface PoolHost {
  /** Default: lines go nowhere. Nest's `Logger`, pino and `console` fit. */
  readonly logger?: PoolLogger;
  /**
   * The module each thread loads; default: the core's own entry, which loads
   * `pool.taskModules`. A host may bring an entry of its own made with
   * `threadHandlers` (`@corepool/core/thread`), e.g. one bundle with its tasks in it.
   */
  readonly threadFile?: string;
  /** Tasks the host imported itself, known beside the modules' (its `threadFile` preloads the same). */
  readonly preloadedTasks?: readonly TaskDefinition[];
  /**
   * `run` checks each input against its task's schema on the calling thread, defaults applied.
   * Default true; false for a host that checks every input at its edge already (the service).
   */
  readonly validateInput?: boolean;
}
