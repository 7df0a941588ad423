import type { Piscina } from 'piscina';
import type { TaskRegistry } from '../tasks/task-registry';
import type { Cancellation } from './cancellation';
import { FifoDispatcher } from './fifo-dispatcher';
import type { TaskRequest, TaskResponse } from './task-message';
import { createTaskRunner } from './task-runner';
import { prepareTransfer } from './transfer';

/**
 * Where an admitted task runs. Rejects with an AbortError when `signal`
 * aborts it (queued or running) and with the thread's error when the thread
 * dies; a task's own failure is an answer, never a rejection.
 */
export interface TaskDispatch {
  run(request: TaskRequest, signal: Cancellation): Promise<TaskResponse>;
  /** Tasks admitted and still waiting for a thread. */
  readonly queued: number;
}

/**
 * Worker threads: tasks wait in arrival order until a thread is free, then go
 * to Piscina; the signal stops a running task by stopping its thread. Large
 * bodies are transferred, not cloned.
 */
export class PiscinaDispatch implements TaskDispatch {
  private readonly line: FifoDispatcher;

  constructor(
    private readonly pool: Piscina<TaskRequest, TaskResponse>,
    threads: number,
  ) {
    this.line = new FifoDispatcher(threads);
  }

  /** Waiting in line, and in Piscina when a thread is being replaced. */
  get queued(): number {
    return this.line.queued + this.pool.queueSize;
  }

  run(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    return this.line.run(() => this.post(request, signal), signal);
  }

  private post(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    if (request.body === undefined) return this.pool.run(request, { signal });
    const { bytes, transferList } = prepareTransfer(request.body);
    return this.pool.run({ ...request, body: bytes }, { signal, transferList });
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

  async run(request: TaskRequest, signal: Cancellation): Promise<TaskResponse> {
    // A deadline can only be honoured before the work starts: nothing can stop
    // synchronous code on the event loop. That is the point of the comparison.
    await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
    if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    return this.runTask(request);
  }
}
