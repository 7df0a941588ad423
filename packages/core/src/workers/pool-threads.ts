import { Piscina } from 'piscina';
import { ErrorCode } from '../common/error-codes';
import { Cancellation } from './cancellation';
import { MemoryWatch } from './memory-watch';
import { piscinaOptions } from './piscina-options';
import type { PoolLogger, PoolSettings } from './pool-settings';
import { classifyRejection } from './task-failure';
import type { TaskRequest, TaskResponse } from './task-message';
import { isProgressMessage, type ProgressMessage } from './task-progress';
import { WARM_UP_TASK } from './task-runner';
import type { TaskStop } from './task-stop';
import { threadPrioritySupported } from './thread-priority';
import { SPARE_TASK_NAME, ThreadRecycler } from './thread-recycler';
import { isThreadStarted } from './thread-started';
import type { TaskStopKind, ThreadCounts, ThreadReplaceCause } from './pool.types';

/** A spare thread that has not come up within this long is given up (and asked for again later). */
const SPARE_PATIENCE_MS = 30_000;

export interface PoolThreadsOptions {
  readonly config: PoolSettings;
  /** The file each thread loads (`thread-entry`'s exports); default: the core's own entry. */
  readonly threadFile?: string;
  /** The pool's logger: these lines are the pool's. */
  readonly logger: PoolLogger;
  /** False once the pool stops taking tasks: no spare is asked for then. */
  readonly accepting: () => boolean;
  /** The tasks in flight, for the memory watch. */
  readonly inFlight: () => Iterable<TaskStop>;
  /** A progress report from a thread (`task-progress.ts`). */
  readonly onProgress: (message: ProgressMessage) => void;
  /** A thread's start time (ms, spawn → code loaded). */
  readonly onThreadStarted: (startMs: number) => void;
}

/**
 * The Piscina pool's threads: started warm, watched for memory
 * (`memory-watch.ts`), recycled (`thread-recycler.ts`), and replaced when
 * they die; it counts what each replacement cost and why.
 */
export class PoolThreads {
  private readonly recycler: ThreadRecycler;
  private readonly replaced: Record<ThreadReplaceCause, number> = {
    crash: 0,
    out_of_memory: 0,
    terminated: 0,
    recycled_tasks: 0,
    recycled_memory: 0,
  };
  private readonly stopped: Record<TaskStopKind, number> = { cooperative: 0, terminated: 0 };
  private memoryWatch: MemoryWatch | undefined;
  private piscina: Piscina<TaskRequest, TaskResponse> | undefined;

  constructor(private readonly options: PoolThreadsOptions) {
    const { pool } = options.config;
    this.recycler = new ThreadRecycler({
      maxTasksPerThread: pool.maxTasksPerThread,
      recycleHeapBytes: pool.recycleHeapMb * 1024 * 1024,
      size: pool.threads,
      threads: () => this.piscina?.threads ?? [],
      // Not from inside Piscina's balancer, which asks for it.
      requestSpare: () => setImmediate(() => this.requestSpare()),
      onRecycled: (cause) => this.threadReplaced(cause),
    });
  }

  /** Piscina, once `open()` made it, until `destroy()`. */
  get pool(): Piscina<TaskRequest, TaskResponse> | undefined {
    return this.piscina;
  }

  /** Makes the Piscina pool and listens to its threads; `warmUp()` then starts them. */
  open(): Piscina<TaskRequest, TaskResponse> {
    const { config, logger } = this.options;
    if (config.pool.niceIncrement > 0 && !threadPrioritySupported) {
      logger.warn(
        `WORKER_NICE_INCREMENT is ignored on ${process.platform}: only Linux sets a priority per thread`,
      );
    }
    const pool = new Piscina<TaskRequest, TaskResponse>(
      piscinaOptions(config.pool, this.recycler.balancer, this.options.threadFile),
    );
    pool.on('workerCreate', (worker: Parameters<ThreadRecycler['onWorkerCreate']>[0]) =>
      this.recycler.onWorkerCreate(worker),
    );
    // An exited thread's id reads -1, so what is gone is found by what is left.
    pool.on('workerDestroy', () =>
      this.recycler.onWorkerDestroy(new Set(pool.threads.map((thread) => thread.threadId))),
    );
    // Errors of idle threads; a thread that fails during a task rejects that task instead.
    pool.on('error', (error: Error) => {
      logger.error(`Idle worker thread failed: ${error.message}`);
      this.threadReplaced('crash');
    });
    // Each thread says how long it took from its start to its code loaded; tasks report progress.
    pool.on('message', (message: unknown) => {
      if (isProgressMessage(message)) this.options.onProgress(message);
      else if (isThreadStarted(message)) this.options.onThreadStarted(message.threadStartMs);
    });
    this.piscina = pool;
    return pool;
  }

  /** Starts every thread and waits until each has loaded the task code; then watches memory. */
  async warmUp(pool: Piscina<TaskRequest, TaskResponse>): Promise<void> {
    const { threads, maxMemoryMb } = this.options.config.pool;
    // One no-op per thread: each is idle, so each gets one, and answers only
    // after it has loaded the task modules.
    await Promise.all(
      Array.from({ length: threads }, () => pool.run({ task: WARM_UP_TASK, input: {} })),
    );
    this.recycler.resetCounts();
    if (maxMemoryMb > 0) {
      this.memoryWatch = new MemoryWatch(
        maxMemoryMb * 1024 * 1024,
        this.options.inFlight,
        () => pool.threads,
      );
    }
  }

  /** Stops watching and ends every thread. */
  async destroy(): Promise<void> {
    this.memoryWatch?.stop();
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  /** Threads alive now. */
  get alive(): number {
    return this.piscina?.threads.length ?? 0;
  }

  /** A task answered on `threadId`: the thread may now be due for recycling. */
  afterTask(threadId: number, heapUsedBytes: number): void {
    this.recycler.afterTask(threadId, heapUsedBytes);
  }

  /** A task ended: a due thread that is now idle goes. */
  retireIdle(): void {
    this.recycler.retireIdle();
  }

  /** A batch's thread died with no task's stop to account for it. */
  threadLost(error: unknown): void {
    const { code } = classifyRejection(error, undefined, this.options.config.pool).error;
    this.threadDied(code, false);
  }

  /**
   * A task was rejected: count the thread it cost, and why. A cancelled task
   * that left the queue before its grace ran out cost none.
   */
  threadDied(code: ErrorCode, terminatedAfterGrace: boolean): void {
    if (code === ErrorCode.WORKER_OUT_OF_MEMORY) this.threadReplaced('out_of_memory');
    else if (code === ErrorCode.WORKER_CRASHED) this.threadReplaced('crash');
    else if (terminatedAfterGrace) {
      this.stopped.terminated += 1;
      this.threadReplaced('terminated');
    }
  }

  /** A cancelled task stopped on its own (or finished within the grace), keeping its thread. */
  stoppedCooperatively(): void {
    this.stopped.cooperative += 1;
  }

  counts(): ThreadCounts {
    const { replaced } = this;
    return {
      threadRestarts: replaced.crash + replaced.out_of_memory + replaced.terminated,
      threadsRecycled: replaced.recycled_tasks + replaced.recycled_memory,
      threadsReplaced: { ...replaced },
      tasksStopped: { ...this.stopped },
    };
  }

  private threadReplaced(cause: ThreadReplaceCause): void {
    this.replaced[cause] += 1;
  }

  /** A task only a thread that has just come up may take, so Piscina starts one (`thread-recycler.ts`). */
  private requestSpare(): void {
    const pool = this.piscina;
    if (pool === undefined || !this.options.accepting()) return;
    const patience = new Cancellation();
    const timer = setTimeout(() => patience.abort('spare never came up'), SPARE_PATIENCE_MS);
    pool
      .run({ task: WARM_UP_TASK, input: {} }, { name: SPARE_TASK_NAME, signal: patience })
      .then(
        () => undefined,
        () => this.recycler.spareFailed(),
      )
      .finally(() => clearTimeout(timer));
  }
}
