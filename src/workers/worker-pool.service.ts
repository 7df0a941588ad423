import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Piscina } from 'piscina';
import { AppError, Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { IdleWaiter } from '../common/idle-waiter';
import { AppConfig } from '../config/app-config';
import { TaskRegistry } from '../tasks/task-registry';
import { activeTracing, type RequestSpan, type TaskTrace } from '../tracing/tracing';
import type { SchedulerState } from '../scheduler/task-scheduler';
import { schedulerOptions, ticketFor, type AdmissionRequest } from './admission';
import { Cancellation, onCancel, type CancelSignal } from './cancellation';
import { MemoryWatch } from './memory-watch';
import { piscinaOptions } from './piscina-options';
import { RollingPercentiles, type Percentiles } from './rolling-percentiles';
import {
  classifyAbort,
  classifyAnswer,
  classifyRejection,
  type AbortReason,
  type ClassifiedFailure,
  type TaskOutcome,
} from './task-failure';
import { InlineDispatch, PiscinaDispatch, type TaskDispatch } from './task-dispatch';
import type { TaskRequest, TaskResponse } from './task-message';
import { preciseNow, WARM_UP_TASK } from './task-runner';
import { isProgressMessage, ProgressRouter, type TaskProgress } from './task-progress';
import { isThreadStarted } from './thread-started';
import { threadPrioritySupported } from './thread-priority';
import { SPARE_TASK_NAME, ThreadRecycler, type RecycleCause } from './thread-recycler';
import { TaskStop } from './task-stop';

export type { TaskOutcome } from './task-failure';

/** Why a thread was replaced: it died, or it was recycled. */
export type ThreadReplaceCause = 'crash' | 'out_of_memory' | 'terminated' | RecycleCause;
export const THREAD_REPLACE_CAUSES: readonly ThreadReplaceCause[] = [
  'crash',
  'out_of_memory',
  'terminated',
  'recycled_tasks',
  'recycled_memory',
];

/** How a cancelled task that had reached a thread ended: on its own, or with its thread. */
export type TaskStopKind = 'cooperative' | 'terminated';

/** A spare thread that has not come up within this long is given up (and asked for again later). */
const SPARE_PATIENCE_MS = 30_000;

/** Longest a task's result waits for its last progress report, which travels on another port. */
const PROGRESS_END_WAIT_MS = 100;

/** How long a task that reached a thread waited and ran. */
export interface TaskTimes {
  readonly waitMs: number;
  readonly runMs: number;
}

export interface RunOptions extends AdmissionRequest {
  /** Raw body of a binary task. Large bodies are transferred: the caller's view is detached. */
  readonly body?: Uint8Array;
  /** Aborts the task, queued or running (the client went away, the job was cancelled). */
  readonly signal?: CancelSignal;
  /** `performance.now()` when the request arrived: the deadline counts from there. */
  readonly arrivedAt?: number;
  /** The request's id, for the log lines about this task. */
  readonly requestId?: string;
  /** Follows the task's progress reports (rate-limited; none arrive after the task settles). */
  readonly onProgress?: (progress: TaskProgress) => void;
  /** The request's server span, when tracing is on: the task's spans are its children. */
  readonly trace?: RequestSpan;
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
  /** The task's spans, when its request is traced and sampled. */
  readonly trace?: TaskTrace;
}

export interface TaskSettled extends TaskRef {
  readonly outcome: TaskOutcome;
  /** Undefined when the task never reached a thread (rejected, or aborted while queued). */
  readonly waitMs?: number;
  readonly runMs?: number;
  readonly error?: AppError;
  /** The task's trace and scheduler span, when its request is traced and sampled. */
  readonly traceId?: string;
  readonly spanId?: string;
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
  /** Threads replaced after dying (crash, memory, terminated after the grace); recycling is counted apart. */
  readonly threadRestarts: number;
  readonly threadsRecycled: number;
  /** Threads replaced, by cause. */
  readonly threadsReplaced: Readonly<Record<ThreadReplaceCause, number>>;
  /** Cancelled tasks that had reached a thread, by how they stopped. */
  readonly tasksStopped: Readonly<Record<TaskStopKind, number>>;
  readonly waitMs: Percentiles;
  readonly runMs: Percentiles;
  /** The scheduler's state (`src/scheduler/`); undefined when tasks run inline. */
  readonly scheduler: SchedulerState | undefined;
  /** Threads are started and warm, and the pool still accepts tasks. */
  readonly ready: boolean;
  readonly accepting: boolean;
}

/**
 * Runs tasks on a Piscina pool of worker threads, so CPU work never blocks the
 * event loop. Adds what a service needs on top of Piscina: a scheduler that
 * admits by time, shares fairly and sheds under overload (`admission.ts` is
 * the seam, `src/scheduler/` the discipline), a deadline from arrival, cancellation
 * when the caller leaves, coded errors for every way a thread can fail
 * (`task-failure.ts`), recycling, and a drain on shutdown. Where tasks run is
 * a `TaskDispatch`: Piscina threads, or inline with `POOL_THREADS=0`.
 */
@Injectable()
export class WorkerPoolService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerPoolService.name);
  private readonly events = new EventEmitter();
  /** The progress reports of every followed task, from every thread. */
  private readonly progress = new ProgressRouter();
  private readonly idle = new IdleWaiter();
  private readonly waitTimes = new RollingPercentiles();
  private readonly runTimes = new RollingPercentiles();
  private readonly recycler: ThreadRecycler;
  /**
   * Each task in flight, for a shutdown past its budget and for the memory
   * watch: a set rather than a listener per task on one shutdown signal,
   * which would cost every task more.
   */
  private readonly inFlight = new Set<TaskStop>();
  private readonly replaced: Record<ThreadReplaceCause, number> = {
    crash: 0,
    out_of_memory: 0,
    terminated: 0,
    recycled_tasks: 0,
    recycled_memory: 0,
  };
  private readonly stopped: Record<TaskStopKind, number> = { cooperative: 0, terminated: 0 };
  private memoryWatch: MemoryWatch | undefined;
  private pool: Piscina<TaskRequest, TaskResponse> | undefined;
  private dispatch: TaskDispatch;
  private warm = false;
  private accepting = true;
  private completed = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly registry: TaskRegistry,
  ) {
    this.recycler = new ThreadRecycler({
      maxTasksPerThread: config.pool.maxTasksPerThread,
      recycleHeapBytes: config.pool.recycleHeapMb * 1024 * 1024,
      size: config.pool.threads,
      threads: () => this.pool?.threads ?? [],
      // Not from inside Piscina's balancer, which asks for it.
      requestSpare: () => setImmediate(() => this.requestSpare()),
      onRecycled: (cause) => this.threadReplaced(cause),
    });
    this.dispatch = new InlineDispatch(registry, (message) => this.progress.deliver(message));
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
    const pool = new Piscina<TaskRequest, TaskResponse>(
      piscinaOptions(this.config.pool, this.recycler.balancer),
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
      this.logger.error(`Idle worker thread failed: ${error.message}`);
      this.threadReplaced('crash');
    });
    // Each thread says how long it took from its start to its code loaded; tasks report progress.
    pool.on('message', (message: unknown) => {
      if (isProgressMessage(message)) this.progress.deliver(message);
      else if (isThreadStarted(message)) this.events.emit('thread-started', message.threadStartMs);
    });
    this.pool = pool;
    const { batchMaxTasks, batchMaxMs } = this.config.scheduler;
    this.dispatch = new PiscinaDispatch(
      pool,
      schedulerOptions(this.config, (delayMs) => this.events.emit('queue-delay', delayMs)),
      {
        maxTasks: batchMaxTasks,
        maxCostMs: batchMaxMs,
        onThreadLost: (error) => {
          const { code } = classifyRejection(error, undefined, this.config.pool).error;
          this.threadDied(code, false);
        },
      },
    );
    // One no-op per thread: each is idle, so each gets one, and answers only
    // after it has loaded the task modules.
    await Promise.all(
      Array.from({ length: threads }, () => pool.run({ task: WARM_UP_TASK, input: {} })),
    );
    this.recycler.resetCounts();
    if (this.config.pool.maxMemoryMb > 0) {
      this.memoryWatch = new MemoryWatch(
        this.config.pool.maxMemoryMb * 1024 * 1024,
        () => this.inFlight,
        () => pool.threads,
      );
    }
    this.warm = true;
    this.logger.log(`${threads} worker threads ready (queue limit ${this.config.pool.maxQueue})`);
  }

  /**
   * Runs a task and resolves with its value and timing, or rejects with an
   * AppError whose code says what happened. Never throws anything else.
   */
  async run(name: string, input: object, options: RunOptions = {}): Promise<TaskResult> {
    const arrivedAt = options.arrivedAt ?? performance.now();
    const definition = this.registry.get(name);
    if (definition === undefined) throw Errors.taskNotFound(name);
    const size = definition.size?.(input, options.body) ?? 1;
    const trace =
      options.trace === undefined
        ? undefined
        : activeTracing()?.startTask(options.trace, name, size);
    const ref: TaskRef = { task: name, requestId: options.requestId, trace };
    if (!this.accepting) throw this.settle(ref, 'rejected', Errors.shuttingDown());

    const { ticket, timeoutMs } = ticketFor(
      name,
      size,
      options,
      arrivedAt,
      this.config.pool.taskTimeoutMs,
    );
    const cancellation = new Cancellation<AbortReason>();
    const stop = new TaskStop(cancellation, this.config.pool.cancelGraceMs);
    const remainingMs = timeoutMs - (performance.now() - arrivedAt);
    // Whole milliseconds: Node keeps one list per distinct duration, so timers of equal
    // duration share one (an append), where a fractional one would make a list of its own.
    const timer = setTimeout(
      () => cancellation.abort('timeout'),
      Math.max(0, Math.ceil(remainingMs)),
    );
    const stopFollowing =
      options.signal === undefined
        ? undefined
        : onCancel(options.signal, () => cancellation.abort('cancelled'));

    const submittedAt = preciseNow() - (performance.now() - arrivedAt);
    this.inFlight.add(stop);
    const progress =
      options.onProgress === undefined ? undefined : this.progress.follow(options.onProgress);
    let reports: number | undefined;
    // A refused or shed task never ran: it is not counted as completed.
    let refused = false;
    try {
      let response: TaskResponse;
      try {
        response = await this.dispatch.run(
          { task: name, input, body: options.body, progress: progress?.id, trace: trace?.parent },
          stop,
          ticket,
        );
        reports = response.progressReports;
        trace?.answered(response);
      } catch (error) {
        // The scheduler's refusal (at once, or shed while waiting) is already coded.
        if (error instanceof AppError) {
          refused = true;
          throw this.settle(ref, 'rejected', error);
        }
        const abortedFor = cancellation.aborted ? cancellation.reason : undefined;
        const failure = classifyRejection(error, abortedFor, this.limits(timeoutMs));
        this.threadDied(failure.error.code, stop.terminatedThread);
        throw this.settleFailure(ref, failure);
      }
      const waitMs = Math.max(0, response.startedAt - submittedAt);
      const timing = { waitMs, runMs: response.runMs };
      this.observe(timing);
      this.recycler.afterTask(response.threadId, response.heapUsedBytes);
      // Aborted, but the thread answered (it stopped on its own, or finished within
      // the grace): the client gets the abort's code, as if the thread had been stopped.
      if (cancellation.aborted && cancellation.reason !== undefined) {
        this.stopped.cooperative += 1;
        throw this.settleFailure(
          ref,
          classifyAbort(cancellation.reason, this.limits(timeoutMs)),
          timing,
        );
      }
      if (response.ok) {
        this.settle(ref, 'success', undefined, timing);
        return { value: response.value, ...timing, threadId: response.threadId };
      }
      throw this.settleFailure(ref, classifyAnswer(response), timing);
    } finally {
      clearTimeout(timer);
      // The last report before the result: the answer says how many left the thread, and
      // they travel on another port (a thread that died answered nothing). Only for tasks
      // that are followed: an `await` costs every other task a microtask.
      if (progress !== undefined) {
        await progress.finish(reports ?? 0, cancellation.aborted ? 0 : PROGRESS_END_WAIT_MS);
      }
      stopFollowing?.();
      stop.dispose();
      this.inFlight.delete(stop);
      if (!refused) this.completed += 1;
      this.recycler.retireIdle();
      if (this.inFlight.size === 0) this.idle.idle();
    }
  }

  /** Called with each task's queue delay (ms) when it leaves the queue for a thread; returns the unsubscribe. */
  onQueueDelay(listener: (delayMs: number) => void): () => void {
    this.events.on('queue-delay', listener);
    return () => this.events.off('queue-delay', listener);
  }

  /** Called with each thread's start time (ms, spawn → code loaded); returns the unsubscribe. */
  onThreadStarted(listener: (startMs: number) => void): () => void {
    this.events.on('thread-started', listener);
    return () => this.events.off('thread-started', listener);
  }

  /** Called with every finished task, whatever its outcome; returns the unsubscribe. */
  onSettled(listener: (settled: TaskSettled) => void): () => void {
    this.events.on('settled', listener);
    return () => this.events.off('settled', listener);
  }

  /**
   * Tasks running or waiting for a thread, per thread the pool keeps (one
   * for inline): cheap enough to sample often, unlike `stats()`. Above 1,
   * tasks wait; the cluster primary compares it across processes (ADR 0027).
   */
  tasksPerThread(): number {
    return this.inFlight.size / Math.max(1, this.config.pool.threads);
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
      threadRestarts: this.replaced.crash + this.replaced.out_of_memory + this.replaced.terminated,
      threadsRecycled: this.replaced.recycled_tasks + this.replaced.recycled_memory,
      threadsReplaced: { ...this.replaced },
      tasksStopped: { ...this.stopped },
      waitMs: this.waitTimes.snapshot(),
      runMs: this.runTimes.snapshot(),
      scheduler: this.dispatch.schedulerState(),
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
    const drained = await this.idle.wait(this.inFlight.size === 0, budgetMs);
    if (!drained) {
      this.logger.warn(
        `${this.inFlight.size} tasks still running after ${budgetMs} ms; cancelling them`,
      );
      for (const { cancellation } of this.inFlight) cancellation.abort('shutdown');
      // The grace, for tasks that stop on their own; the rest are stopped with their threads.
      await this.idle.wait(this.inFlight.size === 0, this.config.pool.cancelGraceMs + 100);
    }
    this.memoryWatch?.stop();
    const { pool } = this;
    this.pool = undefined;
    await pool?.destroy();
    return drained;
  }

  /**
   * A task was rejected: count the thread it cost, and why. A cancelled task
   * that left the queue before its grace ran out cost none.
   */
  private threadDied(code: ErrorCode, terminatedAfterGrace: boolean): void {
    if (code === ErrorCode.WORKER_OUT_OF_MEMORY) this.threadReplaced('out_of_memory');
    else if (code === ErrorCode.WORKER_CRASHED) this.threadReplaced('crash');
    else if (terminatedAfterGrace) {
      this.stopped.terminated += 1;
      this.threadReplaced('terminated');
    }
  }

  /** The pool's limits with this task's own deadline, for the codes of its failures only. */
  private limits(timeoutMs: number) {
    return { ...this.config.pool, taskTimeoutMs: timeoutMs };
  }

  private threadReplaced(cause: ThreadReplaceCause): void {
    this.replaced[cause] += 1;
  }

  /** A task only a thread that has just come up may take, so Piscina starts one (`thread-recycler.ts`). */
  private requestSpare(): void {
    const { pool } = this;
    if (pool === undefined || !this.accepting) return;
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

  private queueSize(): number {
    return this.pool === undefined ? 0 : this.dispatch.queued;
  }

  private settleFailure(ref: TaskRef, failure: ClassifiedFailure, timing?: TaskTimes): AppError {
    if (failure.unexpected) {
      const trace = ref.trace?.parent;
      this.logger.error(
        { reqId: ref.requestId, trace_id: trace?.traceId, span_id: trace?.spanId },
        `Task '${ref.task}': ${failure.error.detail}`,
      );
    }
    return this.settle(ref, failure.outcome, failure.error, timing);
  }

  private settle(
    ref: TaskRef,
    outcome: TaskOutcome,
    error?: AppError,
    timing?: TaskTimes,
  ): AppError {
    ref.trace?.settled(outcome, error);
    const { task, requestId, trace } = ref;
    const settled: TaskSettled = {
      task,
      requestId,
      outcome,
      error,
      ...timing,
      ...(trace === undefined
        ? {}
        : { traceId: trace.parent.traceId, spanId: trace.parent.spanId }),
    };
    this.events.emit('settled', settled);
    return error as AppError;
  }

  private observe(times: TaskTimes): void {
    this.waitTimes.record(times.waitMs);
    this.runTimes.record(times.runMs);
  }
}
