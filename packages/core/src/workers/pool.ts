import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Piscina } from 'piscina';
import { CorepoolError, Errors } from '../common/app-error';
import { IdleWaiter } from '../common/idle-waiter';
import { validateInput } from '../common/validation';
import { TaskRegistry } from '../tasks/task-registry';
import { poolSettings, type PoolOptions } from './pool-options';
import type { PoolLogger, PoolSettings } from './pool-settings';
import { PoolThreads } from './pool-threads';
import { RollingPercentiles } from './rolling-percentiles';
import { schedulerOptions, ticketFor } from './scheduler-ticket';
import { TaskControl } from './task-control';
import { InlineDispatch, PiscinaDispatch, type TaskDispatch } from './task-dispatch';
import { classifyAbort, classifyAnswer, classifyRejection } from './task-failure';
import type { TaskRequest, TaskResponse } from './task-message';
import { ProgressRouter } from './task-progress';
import { preciseNow } from './task-runner';
import { TaskSettlement } from './task-settlement';
import type { TaskStop } from './task-stop';
import { activeTaskTracer } from './task-tracer';
import type {
  PoolStats,
  RunOptions,
  TaskRef,
  TaskResult,
  TaskSettled,
  TaskTimes,
} from './pool.types';

/** Longest a task's result waits for its last progress report, which travels on another port. */
const PROGRESS_END_WAIT_MS = 100;

const SILENT: PoolLogger = { log: () => {}, warn: () => {}, error: () => {} };

/**
 * Runs tasks on a Piscina pool of worker threads, so CPU work never blocks the
 * event loop. Adds what a service needs on top of Piscina: a scheduler that
 * admits by time, shares fairly and sheds under overload (`scheduler-ticket.ts`
 * is the seam, `../scheduler/` the discipline), a deadline from arrival and
 * cancellation when the caller leaves (`task-control.ts`), coded errors for
 * every way a thread can fail (`task-failure.ts`), threads started warm,
 * recycled and replaced (`pool-threads.ts`), and a drain on close. Where
 * tasks run is a `TaskDispatch`: Piscina threads, or inline with `threads: 0`.
 * Made by `createPool`; the Nest module's `WorkerPoolService` is this class.
 */
export class Pool {
  private readonly config: PoolSettings;
  private readonly registry: TaskRegistry;
  private readonly logger: PoolLogger;
  private readonly validates: boolean;
  private readonly events = new EventEmitter();
  /** The progress reports of every followed task, from every thread. */
  private readonly progress = new ProgressRouter();
  private readonly idle = new IdleWaiter();
  private readonly waitTimes = new RollingPercentiles();
  private readonly runTimes = new RollingPercentiles();
  private readonly threads: PoolThreads;
  private readonly settlement: TaskSettlement;
  /**
   * Each task in flight, for a shutdown past its budget and for the memory
   * watch: a set rather than a listener per task on one shutdown signal,
   * which would cost every task more.
   */
  private readonly inFlight = new Set<TaskStop>();
  private dispatch: TaskDispatch;
  private starting: Promise<void> | undefined;
  private warm = false;
  private accepting = true;
  private completed = 0;

  /** `options` are checked at once: a bad value throws a `RangeError` naming it (`poolSettings`). */
  constructor(options: PoolOptions) {
    const config = poolSettings(options);
    const registry = TaskRegistry.load(config.pool.taskModules, options.preloadedTasks);
    this.config = config;
    this.registry = registry;
    this.logger = options.logger ?? SILENT;
    this.validates = options.validateInput ?? true;
    this.threads = new PoolThreads({
      config,
      logger: this.logger,
      threadFile: options.threadFile,
      accepting: () => this.accepting,
      inFlight: () => this.inFlight,
      onProgress: (message) => this.progress.deliver(message),
      onThreadStarted: (startMs) => this.events.emit('thread-started', startMs),
    });
    this.settlement = new TaskSettlement(this.logger, (settled) =>
      this.events.emit('settled', settled),
    );
    this.dispatch = new InlineDispatch(registry, (message) => this.progress.deliver(message));
    this.events.setMaxListeners(0);
  }

  /** What the pool runs by, every default filled in (`createPool`'s options resolved). */
  get settings(): PoolSettings {
    return this.config;
  }

  /** The tasks this pool runs (validation and the catalog read them on the calling thread). */
  get tasks(): TaskRegistry {
    return this.registry;
  }

  /**
   * Starts the threads and waits until each has loaded the task code. `run()`
   * starts them itself; calling this first makes the first task not wait.
   */
  start(): Promise<void> {
    this.starting ??= this.open();
    return this.starting;
  }

  private async open(): Promise<void> {
    const { threads } = this.config.pool;
    if (threads === 0) {
      this.logger.warn(
        'threads: 0 (POOL_THREADS=0): tasks run inline and block the event loop (for comparison only)',
      );
      this.warm = true;
      return;
    }
    const pool = this.threads.open();
    this.dispatch = this.piscinaDispatch(pool);
    await this.threads.warmUp(pool);
    this.warm = true;
    this.logger.log(`${threads} worker threads ready (queue limit ${this.config.pool.maxQueue})`);
  }

  /**
   * Runs a task and resolves with its value and timing, or rejects with a
   * `CorepoolError` whose code says what happened. Never throws anything else.
   */
  async run(name: string, input: object, options: RunOptions = {}): Promise<TaskResult> {
    const arrivedAt = options.arrivedAt ?? performance.now();
    // A closed pool is not started again: its run is refused below (SHUTTING_DOWN).
    if (!this.warm && this.accepting) await this.start();
    const definition = this.registry.get(name);
    if (definition === undefined) throw Errors.taskNotFound(name);
    if (this.validates) input = validateInput(definition.input, input);
    const size = definition.size?.(input, options.body) ?? 1;
    const trace =
      options.trace === undefined
        ? undefined
        : activeTaskTracer()?.startTask(options.trace, name, size);
    const ref: TaskRef = { task: name, requestId: options.requestId, trace };
    if (!this.accepting) throw this.settlement.settle(ref, 'rejected', Errors.shuttingDown());

    const { taskTimeoutMs, cancelGraceMs } = this.config.pool;
    const { ticket, timeoutMs } = ticketFor(
      name,
      size,
      options,
      arrivedAt,
      taskTimeoutMs,
      definition.costClass?.(input, options.body),
    );
    const remainingMs = timeoutMs - (performance.now() - arrivedAt);
    const control = new TaskControl(remainingMs, cancelGraceMs, options.signal);
    const submittedAt = preciseNow() - (performance.now() - arrivedAt);
    this.inFlight.add(control.stop);
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
          control.stop,
          ticket,
        );
        reports = response.progressReports;
        trace?.answered(response);
      } catch (error) {
        refused = error instanceof CorepoolError;
        throw this.rejected(ref, error, control, timeoutMs);
      }
      return this.answered(ref, response, submittedAt, control, timeoutMs);
    } finally {
      control.endDeadline();
      // The last report before the result: the answer says how many left the thread, and
      // they travel on another port (a thread that died answered nothing). Only for tasks
      // that are followed: an `await` costs every other task a microtask.
      if (progress !== undefined) {
        await progress.finish(
          reports ?? 0,
          control.cancellation.aborted ? 0 : PROGRESS_END_WAIT_MS,
        );
      }
      this.ended(control, refused);
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
    const targetThreads = this.config.pool.threads;
    const queueSize = this.queueSize();
    const running = Math.max(0, this.inFlight.size - queueSize);
    return {
      mode: this.threads.pool === undefined ? 'inline' : 'threads',
      threads: this.threads.alive,
      targetThreads,
      queueSize,
      maxQueue: this.config.pool.maxQueue,
      running,
      utilization:
        targetThreads === 0 ? (running > 0 ? 1 : 0) : Math.min(1, running / targetThreads),
      completed: this.completed,
      ...this.threads.counts(),
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
   * within `budgetMs` (default: `shutdown.timeoutMs`), cancels what is left
   * with SHUTTING_DOWN, stops the threads. Resolves true when nothing had to
   * be cancelled.
   */
  async close(budgetMs: number = this.config.shutdown.timeoutMs): Promise<boolean> {
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
    await this.threads.destroy();
    return drained;
  }

  /** Tasks wait in the scheduler, then go to Piscina (`task-dispatch.ts`). */
  private piscinaDispatch(pool: Piscina<TaskRequest, TaskResponse>): TaskDispatch {
    const { batchMaxTasks, batchMaxMs } = this.config.scheduler;
    return new PiscinaDispatch(
      pool,
      schedulerOptions(this.config, (delayMs) => this.events.emit('queue-delay', delayMs)),
      {
        maxTasks: batchMaxTasks,
        maxCostMs: batchMaxMs,
        onThreadLost: (error) => this.threads.threadLost(error),
      },
    );
  }

  /** The dispatch rejected the task; returns the coded error to throw. */
  private rejected(
    ref: TaskRef,
    error: unknown,
    control: TaskControl,
    timeoutMs: number,
  ): CorepoolError {
    // The scheduler's refusal (at once, or shed while waiting) is already coded.
    if (error instanceof CorepoolError) return this.settlement.settle(ref, 'rejected', error);
    const failure = classifyRejection(error, control.abortedFor, this.limits(timeoutMs));
    this.threads.threadDied(failure.error.code, control.stop.terminatedThread);
    return this.settlement.failed(ref, failure);
  }

  /** A thread answered: the task's result, or (thrown) the coded error of its failure or abort. */
  private answered(
    ref: TaskRef,
    response: TaskResponse,
    submittedAt: number,
    control: TaskControl,
    timeoutMs: number,
  ): TaskResult {
    const waitMs = Math.max(0, response.startedAt - submittedAt);
    const timing: TaskTimes = { waitMs, runMs: response.runMs };
    this.waitTimes.record(timing.waitMs);
    this.runTimes.record(timing.runMs);
    this.threads.afterTask(response.threadId, response.heapUsedBytes);
    // Aborted, but the thread answered (it stopped on its own, or finished within
    // the grace): the client gets the abort's code, as if the thread had been stopped.
    const abortedFor = control.abortedFor;
    if (abortedFor !== undefined) {
      this.threads.stoppedCooperatively();
      throw this.settlement.failed(ref, classifyAbort(abortedFor, this.limits(timeoutMs)), timing);
    }
    if (response.ok) {
      this.settlement.settle(ref, 'success', undefined, timing);
      return { value: response.value, ...timing, threadId: response.threadId };
    }
    throw this.settlement.failed(ref, classifyAnswer(response), timing);
  }

  /** The task has ended, its last progress delivered: it leaves the tasks in flight. */
  private ended(control: TaskControl, refused: boolean): void {
    control.release();
    this.inFlight.delete(control.stop);
    if (!refused) this.completed += 1;
    this.threads.retireIdle();
    if (this.inFlight.size === 0) this.idle.idle();
  }

  /** The pool's limits with this task's own deadline, for the codes of its failures only. */
  private limits(timeoutMs: number) {
    return { ...this.config.pool, taskTimeoutMs: timeoutMs };
  }

  private queueSize(): number {
    return this.threads.pool === undefined ? 0 : this.dispatch.queued;
  }
}

/**
 * A pool of worker threads that runs the tasks of `options.tasks`. Its
 * threads start with the first `run()` (or `start()`); `close()` drains it.
 *
 * ```ts
 * const pool = createPool({ tasks: [require.resolve('./tasks')], threads: 2 });
 * const { value } = await pool.run('fib', { n: 30 }, { deadlineMs: 2000 });
 * ```
 */
export function createPool(options: PoolOptions): Pool {
  return new Pool(options);
}
