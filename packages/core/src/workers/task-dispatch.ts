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
import type { ProgressMessage } from './task-progress';
import type { TaskStop } from './task-stop';
import { ThreadBatch } from './thread-batch';
import { prepareTransfer } from './transfer';

/**
 * Where an admitted task runs. Rejects with an AbortError when `stop` removes
 * it from the queue or terminates its thread, and with the thread's error
 * when the thread dies; a task's own failure, or its cooperative stop, is an
 * answer, never a rejection.
 */
export interface TaskDispatch {
  /**
   * Also rejects with an CorepoolError (POOL_SATURATED) when the scheduler does
   * not admit the task, or sheds it while it waits.
   */
  run(request: TaskRequest, stop: TaskStop, ticket: Ticket): Promise<TaskResponse>;
  /** Tasks admitted and still waiting for a thread. */
  readonly queued: number;
  /** The scheduler's state; undefined when tasks run inline. */
  schedulerState(): SchedulerState | undefined;
}

/**
 * Worker threads: tasks wait in the scheduler (admission by time, fair
 * shares, CoDel with adaptive LIFO; `src/scheduler/`) until a thread is free,
 * then go to Piscina, which never holds more tasks than it has threads. A
 * cancelled task leaves the scheduler's queue at once; once handed to
 * Piscina it is asked to stop through its shared flag, and its thread is
 * terminated only past the grace (`task-stop.ts`). Large bodies are
 * transferred, not cloned.
 */
export class PiscinaDispatch implements TaskDispatch {
  private readonly scheduler: TaskScheduler;

  /**
   * `batching.maxTasks` above 1 lets small tasks share a thread's message
   * (`thread-batch.ts`); `onThreadLost` hears of a batch's thread that died.
   */
  constructor(
    private readonly pool: Piscina<TaskRequest, TaskResponse>,
    options: SchedulerOptions,
    batching?: { maxTasks: number; maxCostMs: number; onThreadLost: (error: unknown) => void },
  ) {
    const batch =
      batching === undefined || batching.maxTasks < 2
        ? undefined
        : {
            maxTasks: batching.maxTasks,
            maxCostMs: batching.maxCostMs,
            open: () =>
              new ThreadBatch(
                pool,
                (request, stop) => this.post(request, stop),
                batching.onThreadLost,
              ),
          };
    this.scheduler = new TaskScheduler(
      { ...options, batch, threadMsOf: (response) => (response as TaskResponse).runMs },
      (signal, listener) => onCancel(signal as Cancellation, listener),
    );
  }

  /** Waiting in line, and in Piscina when a thread is being replaced. */
  get queued(): number {
    return this.scheduler.queued + this.pool.queueSize;
  }

  schedulerState(): SchedulerState {
    return this.scheduler.state();
  }

  run(request: TaskRequest, stop: TaskStop, ticket: Ticket): Promise<TaskResponse> {
    // A body travels by transfer: such tasks go alone.
    const batchable = request.body === undefined;
    return this.scheduler.run(
      ticket,
      (batch) =>
        batch instanceof ThreadBatch ? batch.add(request, stop) : this.post(request, stop),
      stop.cancellation,
      batchable,
    );
  }

  private post(request: TaskRequest, stop: TaskStop): Promise<TaskResponse> {
    stop.markPosted();
    const signal = stop.termination;
    if (request.body === undefined) {
      return this.pool.run({ ...request, cancelFlag: stop.flag }, { signal });
    }
    const { bytes, transferList } = prepareTransfer(request.body);
    return this.pool.run(
      { ...request, body: bytes, cancelFlag: stop.flag },
      { signal, transferList },
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

  /** `postProgress`: the reports of a task run here go straight to the pool's router. */
  constructor(registry: TaskRegistry, postProgress: (message: ProgressMessage) => void) {
    this.runTask = createTaskRunner(registry, postProgress);
  }

  schedulerState(): undefined {
    return undefined;
  }

  async run(request: TaskRequest, stop: TaskStop): Promise<TaskResponse> {
    // A deadline can only be honoured before the work starts, or where the task
    // checks its flag: nothing else stops synchronous code on the event loop.
    await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
    if (stop.cancellation.aborted) {
      throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    }
    return this.runTask({ ...request, cancelFlag: stop.flag });
  }
}
