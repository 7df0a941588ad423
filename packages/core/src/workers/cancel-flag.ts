import {
  TaskCancelledError,
  type SpanAttributes,
  type TaskContext,
  type TaskSpan,
} from '../tasks/task-context';
import { UNTRACED_SPAN, type ThreadTrace } from './thread-trace';

/**
 * One task's cancellation flag: a few bytes of shared memory that travel
 * with the task (a SharedArrayBuffer is shared, not copied, by
 * `postMessage`). The main thread writes it, the task's thread reads it:
 * no message has to reach a thread that is busy running synchronous code.
 *
 * Slot `CANCELLED` is 1 once the task is cancelled; slot `THREAD` holds the
 * id of the thread running the task (0 before it starts and once it has
 * ended), so the main thread knows which thread to watch or stop for it.
 */
export type CancelFlag = Int32Array;

const CANCELLED = 0;
const THREAD = 1;

const SLOTS = 2;

export function createCancelFlag(): CancelFlag {
  return new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
}

/** Flags per shared buffer: one allocation serves this many tasks in flight. */
const FLAGS_PER_SLAB = 256;

/**
 * Flags for the tasks in flight, reused: allocating a SharedArrayBuffer
 * costs every task, a free list nothing (figure in ADR 0050). Flags are views on a few shared buffers
 * (a view crosses threads as a view on the same memory), cleared when they
 * come back. A flag is released once its task has ended on both sides.
 */
export class CancelFlagPool {
  private readonly free: CancelFlag[] = [];

  acquire(): CancelFlag {
    const flag = this.free.pop();
    if (flag !== undefined) return flag;
    const slab = new SharedArrayBuffer(FLAGS_PER_SLAB * SLOTS * Int32Array.BYTES_PER_ELEMENT);
    for (let index = 1; index < FLAGS_PER_SLAB; index++) {
      this.free.push(new Int32Array(slab, index * SLOTS * Int32Array.BYTES_PER_ELEMENT, SLOTS));
    }
    return new Int32Array(slab, 0, SLOTS);
  }

  release(flag: CancelFlag): void {
    Atomics.store(flag, CANCELLED, 0);
    Atomics.store(flag, THREAD, 0);
    this.free.push(flag);
  }
}

/** Main side: asks the task to stop, and wakes its `signal` if the task waits on one. */
export function requestCancel(flag: CancelFlag): void {
  Atomics.store(flag, CANCELLED, 1);
  Atomics.notify(flag, CANCELLED);
}

export function isCancelled(flag: CancelFlag): boolean {
  return Atomics.load(flag, CANCELLED) === 1;
}

/** The thread running the task; 0 while it has not started. */
export function runningOn(flag: CancelFlag): number {
  return Atomics.load(flag, THREAD);
}

/** `Atomics.waitAsync` (ES2024; the project's lib is ES2023). */
type WaitAsyncResult = { async: false; value: string } | { async: true; value: Promise<string> };
const atomics = Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number): WaitAsyncResult;
};
const waitAsync = (array: Int32Array, index: number, value: number): WaitAsyncResult =>
  atomics.waitAsync(array, index, value);

/**
 * Thread side: the TaskContext a task's `run` receives. The signal is made
 * only when a task asks for it: a synchronous task never pays for it.
 */
export class FlagTaskContext implements TaskContext {
  private controller: AbortController | undefined;
  private finished = false;

  constructor(
    private readonly flag: CancelFlag,
    threadId: number,
    /** Where `progress` reports go (`task-progress.ts`); none when nobody follows the task. */
    private readonly report?: TaskContext['progress'],
    /** The task's spans, when its request is traced (`thread-trace.ts`). */
    private readonly trace?: ThreadTrace,
  ) {
    Atomics.store(flag, THREAD, threadId);
  }

  progress(fraction: number, message?: string): void {
    this.report?.(fraction, message);
  }

  addEvent(name: string, attributes?: SpanAttributes): void {
    this.trace?.addEvent(name, attributes);
  }

  startSpan(name: string, attributes?: SpanAttributes): TaskSpan {
    return this.trace?.startSpan(name, attributes) ?? UNTRACED_SPAN;
  }

  get cancelled(): boolean {
    return isCancelled(this.flag);
  }

  throwIfCancelled(): void {
    if (Atomics.load(this.flag, CANCELLED) === 1) throw new TaskCancelledError();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.cancelled) controller.abort(new TaskCancelledError());
      else this.wakeOnCancel(controller);
    }
    return this.controller.signal;
  }

  /** The task has ended: a waiting signal is released (without aborting). */
  finish(): void {
    this.finished = true;
    // No longer running there: a batch's thread goes on with its next task, and the
    // memory watch must not take this one, done but not yet answered, for it.
    Atomics.store(this.flag, THREAD, 0);
    if (this.controller !== undefined) Atomics.notify(this.flag, CANCELLED);
  }

  private wakeOnCancel(controller: AbortController): void {
    const wait = waitAsync(this.flag, CANCELLED, 0);
    if (!wait.async) {
      if (this.cancelled) controller.abort(new TaskCancelledError());
      return;
    }
    void wait.value.then(() => {
      if (this.cancelled) controller.abort(new TaskCancelledError());
      else if (!this.finished) this.wakeOnCancel(controller);
    });
  }
}
