import { EventEmitter } from 'node:events';
import { extname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Piscina } from 'piscina';
import { AppError, Errors } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import { Cancellation, onCancel, type CancelSignal } from './cancellation';
import { FifoDispatcher } from './fifo-dispatcher';
import type { TaskInputCode } from '../tasks/task-input-error';
import type { TaskRequest, TaskResponse } from './task-message';
import { TaskRegistry } from '../tasks/task-registry';
import { createTaskRunner, preciseNow, WARM_UP_TASK } from './task-runner';
import { threadPrioritySupported } from './thread-priority';
import { ThreadRecycler } from './thread-recycler';
import type { ThreadData } from './thread-entry';
import { prepareTransfer } from './transfer';
import { RollingPercentiles, type Percentiles } from './rolling-percentiles';

/** Every way a task can end; the `outcome` label of `compute_tasks_total`. */
export type TaskOutcome = 'success' | 'failed' | 'timeout' | 'rejected' | 'cancelled' | 'crashed';

export interface RunOptions {
  /** Raw body of a binary task. Large bodies are transferred: the caller's view is detached. */
  readonly body?: Uint8Array;
  /** Aborts the task, queued or running (the client went away, the job was cancelled). */
  readonly signal?: CancelSignal;
  /** `performance.now()` when the request arrived: the deadline counts from there. */
  readonly arrivedAt?: number;
  /** The request's id, for the log lines about this task. */
  readonly requestId?: string;
}

export interface TaskResult {
  readonly value: unknown;
  readonly waitMs: number;
  readonly runMs: number;
  /** Worker thread that ran the task (0: inline, on the main thread). */
  readonly threadId: number;
}

/** Which task, for which request. */
interface TaskRef {
  readonly task: string;
  readonly requestId?: string;
}

export interface TaskSettled extends TaskRef {
  readonly outcome: TaskOutcome;
  /** Undefined when the task never reached a thread (rejected, or aborted while queued). */
  readonly waitMs?: number;
  readonly runMs?: number;
  readonly error?: AppError;
}

export interface PoolStats {
  readonly mode: 'threads' | 'inline';
  /** Threads alive now, and the size the pool keeps itself at. */
  readonly threads: number;
  readonly targetThreads: number;
  readonly queueSize: number;
  readonly maxQueue: number;
  readonly running: number;
  /** Share of threads busy right now, 0..1. */
  readonly utilization: number;
  readonly completed: number;
  /** Threads replaced after dying (crash, heap, timeout); recycling is counted apart. */
  readonly threadRestarts: number;
  readonly threadsRecycled: number;
  readonly waitMs: Percentiles;
  readonly runMs: Percentiles;
  /** Threads are started and warm, and the pool still accepts tasks. */
  readonly ready: boolean;
  readonly accepting: boolean;
}

type AbortReason = 'timeout' | 'cancelled' | 'shutdown';

/** A rejection from Piscina for an aborted task; it carries no useful detail of its own. */
const isAbortError = (error: unknown) => error instanceof Error && error.name === 'AbortError';

/** A task's verdict on its input, as the coded error the client gets. */
function inputError(response: { message: string; property?: string; code?: TaskInputCode }) {
  switch (response.code) {
    case 'INVALID_DOCUMENT':
      return Errors.invalidDocument(response.message);
    case 'DOCUMENT_ENCRYPTED':
      return Errors.documentEncrypted(response.message);
    case undefined:
    case 'VALIDATION_FAILED':
      return Errors.validationFailed(response.message, [
        { property: response.property ?? 'body', messages: [response.message] },
      ]);
  }
}

/**
 * Runs tasks on a Piscina pool of worker threads, so CPU work never blocks the
 * event loop. Adds what an HTTP service needs on top of Piscina: a bounded
 * queue that rejects at once, a deadline from arrival, cancellation when the
 * client leaves, coded errors for every way a thread can fail, recycling, and
 * a drain on shutdown. With `POOL_THREADS=0` the same API runs tasks inline.
 */
@Injectable()
export class WorkerPoolService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerPoolService.name);
  private readonly events = new EventEmitter();
  private readonly waitTimes = new RollingPercentiles();
  private readonly runTimes = new RollingPercentiles();
  private readonly recycler: ThreadRecycler;
  /**
   * The cancellation of each task in flight, for a shutdown past its budget:
   * a set rather than a listener per task on one shutdown signal, which would
   * cost every task more.
   */
  private readonly inFlight = new Set<Cancellation<AbortReason>>();
  private readonly runInline = createTaskRunner(this.registry);
  /** The queue: tasks wait here, in order, until a thread is free. */
  private readonly dispatcher: FifoDispatcher;
  private pool: Piscina<TaskRequest, TaskResponse> | undefined;
  private warm = false;
  private accepting = true;
  private completed = 0;
  /** Smoothed recent times, for Retry-After, over `observed` tasks that reached a thread. */
  private observed = 0;
  private meanWaitMs = 0;
  private meanRunMs = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly registry: TaskRegistry,
  ) {
    this.recycler = new ThreadRecycler(config.pool.maxTasksPerThread);
    this.dispatcher = new FifoDispatcher(config.pool.threads);
    this.events.setMaxListeners(0);
  }

  async onModuleInit(): Promise<void> {
    await this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close(this.config.shutdown.timeoutMs);
  }

  /** Starts the threads and waits until each has loaded the task code. */
  async start(): Promise<void> {
    if (this.pool !== undefined || this.warm) return;
    const { threads } = this.config.pool;
    if (threads === 0) {
      this.logger.warn(
        'POOL_THREADS=0: tasks run inline and block the event loop (for comparison only)',
      );
      this.warm = true;
      return;
    }
    if (this.config.pool.niceIncrement > 0 && !threadPrioritySupported) {
      this.logger.warn(
        `WORKER_NICE_INCREMENT is ignored on ${process.platform}: only Linux sets a priority per thread`,
      );
    }
    const pool = new Piscina<TaskRequest, TaskResponse>(this.piscinaOptions());
    pool.on('workerCreate', (worker: Parameters<ThreadRecycler['onWorkerCreate']>[0]) =>
      this.recycler.onWorkerCreate(worker),
    );
    // An exited thread's id reads -1, so what is gone is found by what is left.
    pool.on('workerDestroy', () =>
      this.recycler.onWorkerDestroy(new Set(pool.threads.map((thread) => thread.threadId))),
    );
    // Errors of idle threads; a thread that fails during a task rejects that task instead.
    pool.on('error', (error: Error) =>
      this.logger.error(`Idle worker thread failed: ${error.message}`),
    );
    this.pool = pool;
    // One no-op per thread: each is idle, so each gets one, and answers only
    // after it has loaded the task modules.
    await Promise.all(
      Array.from({ length: threads }, () => pool.run({ task: WARM_UP_TASK, input: {} })),
    );
    this.recycler.resetCounts();
    this.warm = true;
    this.logger.log(`${threads} worker threads ready (queue limit ${this.config.pool.maxQueue})`);
  }

  /**
   * Runs a task and resolves with its value and timing, or rejects with an
   * AppError whose code says what happened. Never throws anything else.
   */
  async run(name: string, input: object, options: RunOptions = {}): Promise<TaskResult> {
    const arrivedAt = options.arrivedAt ?? performance.now();
    if (this.registry.get(name) === undefined) throw Errors.taskNotFound(name);
    const ref: TaskRef = { task: name, requestId: options.requestId };
    if (!this.accepting) throw this.settle(ref, 'rejected', Errors.shuttingDown());
    if (this.pool !== undefined && this.queueSize() >= this.config.pool.maxQueue) {
      throw this.settle(ref, 'rejected', Errors.poolSaturated(this.retryAfterSeconds()));
    }

    const cancellation = new Cancellation<AbortReason>();
    const remainingMs = this.config.pool.taskTimeoutMs - (performance.now() - arrivedAt);
    const timer = setTimeout(() => cancellation.abort('timeout'), Math.max(0, remainingMs));
    const stopFollowing =
      options.signal === undefined
        ? undefined
        : onCancel(options.signal, () => cancellation.abort('cancelled'));

    const submittedAt = preciseNow() - (performance.now() - arrivedAt);
    this.inFlight.add(cancellation);
    try {
      const response = await this.dispatch({ task: name, input, body: options.body }, cancellation);
      const waitMs = Math.max(0, response.startedAt - submittedAt);
      const timing = { waitMs, runMs: response.runMs };
      this.observe(timing);
      if (response.ok) {
        this.settle(ref, 'success', undefined, timing);
        return { value: response.value, ...timing, threadId: response.threadId };
      }
      const error =
        response.kind === 'input' ? inputError(response) : Errors.taskFailed(response.message);
      throw this.settle(ref, 'failed', error, timing);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw this.settleFailure(ref, error, cancellation);
    } finally {
      clearTimeout(timer);
      stopFollowing?.();
      this.inFlight.delete(cancellation);
      this.completed += 1;
      if (this.pool !== undefined) this.recycler.retireIdle(this.pool.threads);
      if (this.inFlight.size === 0) this.events.emit('idle');
    }
  }

  /** Called with every finished task, whatever its outcome; returns the unsubscribe. */
  onSettled(listener: (settled: TaskSettled) => void): () => void {
    this.events.on('settled', listener);
    return () => this.events.off('settled', listener);
  }

  stats(): PoolStats {
    const { pool } = this;
    const targetThreads = this.config.pool.threads;
    const threads = pool?.threads.length ?? 0;
    const queueSize = this.queueSize();
    const running = Math.max(0, this.inFlight.size - queueSize);
    return {
      mode: pool === undefined ? 'inline' : 'threads',
      threads,
      targetThreads,
      queueSize,
      maxQueue: this.config.pool.maxQueue,
      running,
      utilization:
        targetThreads === 0 ? (running > 0 ? 1 : 0) : Math.min(1, running / targetThreads),
      completed: this.completed,
      threadRestarts: this.recycler.restarts,
      threadsRecycled: this.recycler.recycled,
      waitMs: this.waitTimes.snapshot(),
      runMs: this.runTimes.snapshot(),
      ready: this.warm && this.accepting,
      accepting: this.accepting,
    };
  }

  /** Stops taking tasks; new ones get SHUTTING_DOWN while queued and running ones finish. */
  stopAccepting(): void {
    this.accepting = false;
  }

  /**
   * Drains, then closes: stops accepting, lets queued and running tasks finish
   * within `budgetMs`, cancels what is left with SHUTTING_DOWN, stops the
   * threads. Resolves true when nothing had to be cancelled.
   */
  async close(budgetMs: number): Promise<boolean> {
    this.stopAccepting();
    const drained = await this.waitIdle(budgetMs);
    if (!drained) {
      this.logger.warn(
        `${this.inFlight.size} tasks still running after ${budgetMs} ms; cancelling them`,
      );
      for (const cancellation of this.inFlight) cancellation.abort('shutdown');
    }
    const { pool } = this;
    this.pool = undefined;
    await pool?.destroy();
    return drained;
  }

  private async waitIdle(budgetMs: number): Promise<boolean> {
    if (this.inFlight.size === 0) return true;
    return new Promise<boolean>((resolveIdle) => {
      const timer = setTimeout(() => {
        this.events.off('idle', onIdle);
        resolveIdle(false);
      }, budgetMs);
      const onIdle = () => {
        clearTimeout(timer);
        resolveIdle(true);
      };
      this.events.once('idle', onIdle);
    });
  }

  /** Waiting here, and in Piscina when a thread is being replaced. */
  private queueSize(): number {
    return this.dispatcher.queued + (this.pool?.queueSize ?? 0);
  }

  private dispatch(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    const { pool } = this;
    if (pool === undefined) return this.dispatchInline(request, signal);
    return this.dispatcher.run(() => this.post(pool, request, signal), signal);
  }

  /** Hands a task to Piscina; the signal then stops it, running, by stopping its thread. */
  private post(
    pool: Piscina<TaskRequest, TaskResponse>,
    request: TaskRequest,
    signal: Cancellation,
  ): Promise<TaskResponse> {
    if (request.body === undefined) return pool.run(request, { signal });
    const { bytes, transferList } = prepareTransfer(request.body);
    return pool.run({ ...request, body: bytes }, { signal, transferList });
  }

  /** The "before" state: same contract, but the event loop does the work itself. */
  private async dispatchInline(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    // A deadline can only be honoured before the work starts: nothing can stop
    // synchronous code on the event loop. That is the point of the comparison.
    await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
    if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    return this.runInline(request);
  }

  private settleFailure(
    ref: TaskRef,
    error: unknown,
    cancellation: Cancellation<AbortReason>,
  ): AppError {
    if (isAbortError(error) && cancellation.aborted) {
      const { reason } = cancellation;
      if (reason === 'timeout') {
        return this.settle(ref, 'timeout', Errors.taskTimeout(this.config.pool.taskTimeoutMs));
      }
      if (reason === 'shutdown') return this.settle(ref, 'cancelled', Errors.shuttingDown());
      return this.settle(ref, 'cancelled', Errors.taskCancelled());
    }
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return this.settle(
        ref,
        'crashed',
        Errors.workerOutOfMemory(this.config.pool.maxOldGenerationMb),
      );
    }
    const detail = error instanceof Error ? error.message : String(error);
    this.logger.error(
      { reqId: ref.requestId },
      `Worker thread died running '${ref.task}': ${detail}`,
    );
    return this.settle(ref, 'crashed', Errors.workerCrashed(detail));
  }

  private settle(
    ref: TaskRef,
    outcome: TaskOutcome,
    error?: AppError,
    timing?: { waitMs: number; runMs: number },
  ): AppError {
    const settled: TaskSettled = { ...ref, outcome, error, ...timing };
    this.events.emit('settled', settled);
    return error as AppError;
  }

  private observe({ waitMs, runMs }: { waitMs: number; runMs: number }): void {
    this.waitTimes.record(waitMs);
    this.runTimes.record(runMs);
    // The first measurement starts the averages, so Retry-After is right from the first task.
    const alpha = this.observed === 0 ? 1 : 0.2;
    this.observed += 1;
    this.meanWaitMs += alpha * (waitMs - this.meanWaitMs);
    this.meanRunMs += alpha * (runMs - this.meanRunMs);
  }

  /**
   * When a slot is likely to be free: the queue ahead of a new task, worked
   * off by every thread at the recently measured run time, or the recently
   * measured wait if that is longer. At least 1 s, at most the task timeout.
   */
  private retryAfterSeconds(): number {
    const threads = Math.max(1, this.config.pool.threads);
    const queueMs = (this.queueSize() * this.meanRunMs) / threads;
    const estimateMs = Math.max(queueMs, this.meanWaitMs) + this.meanRunMs;
    const maxSeconds = Math.ceil(this.config.pool.taskTimeoutMs / 1000);
    return Math.min(maxSeconds, Math.max(1, Math.ceil(estimateMs / 1000)));
  }

  private piscinaOptions(): ConstructorParameters<typeof Piscina>[0] {
    const { threads, maxQueue, maxOldGenerationMb, niceIncrement, taskModules } = this.config.pool;
    // In development and in jest this file is TypeScript, and so is the entry;
    // the threads then compile it with tsx. Built code loads plain JavaScript.
    const extension = extname(__filename);
    // The threads lower their own priority once their code is loaded (thread-entry).
    const workerData: ThreadData = { taskModules, niceIncrement };
    return {
      filename: resolve(__dirname, `thread-entry${extension}`),
      execArgv: extension === '.ts' ? ['--require', require.resolve('tsx/cjs')] : undefined,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      // Tasks queue in the dispatcher; Piscina's queue only holds the few that
      // wait for a thread being replaced, and its limit is a backstop.
      maxQueue: Math.max(1, maxQueue),
      concurrentTasksPerWorker: 1,
      resourceLimits:
        maxOldGenerationMb === undefined
          ? undefined
          : { maxOldGenerationSizeMb: maxOldGenerationMb },
      loadBalancer: this.recycler.balancer,
      workerData,
      recordTiming: false,
    };
  }
}
