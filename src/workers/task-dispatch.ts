import type { Piscina } from 'piscina';
import type { TaskRegistry } from '../tasks/task-registry';
import {
  TaskScheduler,
  type SchedulerOptions,
  type SchedulerState,
  type Ticket,
} from '../scheduler/task-scheduler';
import { onCancel, type Cancellation } from './cancellation';
import type { TaskRequest, TaskResponse } from './task-message';
import { createTaskRunner } from './task-runner';
import { prepareTransfer } from './transfer';

/**
 * Where an admitted task runs. Rejects with an AbortError when `signal`
 * aborts it (queued or running) and with the thread's error when the thread
 * dies; a task's own failure is an answer, never a rejection.
 */
export interface TaskDispatch {
  /**
   * Also rejects with an AppError (POOL_SATURATED) when the scheduler does
   * not admit the task, or sheds it while it waits.
   */
  run(request: TaskRequest, signal: Cancellation, ticket: Ticket): Promise<TaskResponse>;
  /** Tasks admitted and still waiting for a thread. */
  readonly queued: number;
  /** The scheduler's state; undefined when tasks run inline. */
  schedulerState(): SchedulerState | undefined;
}

/**
 * Worker threads: tasks wait in the scheduler (admission by time, fair
 * shares, CoDel with adaptive LIFO; `src/scheduler/`) until a thread is free,
 * then go to Piscina, which never holds more tasks than it has threads; the
 * signal stops a running task by stopping its thread. Large bodies are
 * transferred, not cloned.
 */
export class PiscinaDispatch implements TaskDispatch {
  private readonly scheduler: TaskScheduler;

  constructor(
    private readonly pool: Piscina<TaskRequest, TaskResponse>,
    options: SchedulerOptions,
  ) {
    this.scheduler = new TaskScheduler(options, (signal, listener) =>
      onCancel(signal as Cancellation, listener),
    );
  }

  /** Waiting in line, and in Piscina when a thread is being replaced. */
  get queued(): number {
    return this.scheduler.queued + this.pool.queueSize;
  }

  schedulerState(): SchedulerState {
    return this.scheduler.state();
  }

  run(request: TaskRequest, signal: Cancellation, ticket: Ticket): Promise<TaskResponse> {
    return this.scheduler.run(ticket, () => this.post(request, signal), signal);
  }

  private post(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    const ports = request.progress === undefined ? [] : [request.progress];
    if (request.body === undefined) {
      return this.pool.run(request, { signal, transferList: ports });
    }
    const { bytes, transferList } = prepareTransfer(request.body);
    return this.pool.run(
      { ...request, body: bytes },
      { signal, transferList: [...transferList, ...ports] },
    );
  }
}

/**
 * `POOL_THREADS=0`, the "before" state: the same contract, but the event loop
 * does the work itself, for comparison only.
 */
export class InlineDispatch implements TaskDispatch {
  readonly queued = 0;
  private readonly runTask: ReturnType<typeof createTaskRunner>;

  constructor(registry: TaskRegistry) {
    this.runTask = createTaskRunner(registry);
  }

  schedulerState(): undefined {
    return undefined;
  }

  async run(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    // A deadline can only be honoured before the work starts: nothing can stop
    // synchronous code on the event loop. That is the point of the comparison.
    await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
    if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    return this.runTask(request);
  }
}
