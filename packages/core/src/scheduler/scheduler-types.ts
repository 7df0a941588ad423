import type { KeyDepth, ServeOrder } from './fair-queue';
import type { RefusalReason } from './refusal';

/** What the scheduler is told about a task when it asks to run. */
export interface Ticket {
  /** The task's name: its cost is estimated per task. */
  readonly task: string;
  /** How much work this input is, in the task's own unit (`TaskDefinition.size`); 1 if undeclared. */
  readonly size: number;
  /**
   * What else drives this input's cost per unit (`TaskDefinition.costClass`):
   * the cost is learnt per task and class; absent, one class per task.
   */
  readonly costClass?: string;
  /** The fair-share key: a client's, the shared one, or the jobs'. */
  readonly key: string;
  /** When the task must have finished, on the scheduler's clock (ms). */
  readonly deadlineAt: number;
  /**
   * The client said how long it waits (a deadline header). Without it the
   * client's patience is unknown, so under overload such a task is refused
   * if it would wait longer than the target (`queue-delay`).
   */
  readonly clientDeadline: boolean;
}

export interface SchedulerOptions {
  /** Tasks that may run at once (the pool's threads). */
  readonly slots: number;
  /** Tasks that may wait, all keys together: a memory backstop only. */
  readonly maxQueue: number;
  /** CoDel's target queue delay and interval (ms). */
  readonly targetDelayMs: number;
  readonly intervalMs: number;
  /** Estimated run time of a task never measured yet (ms). */
  readonly costPriorMs: number;
  /** Threads the jobs key may hold at once. */
  readonly jobsMaxThreads: number;
  /** The longest `Retry-After` a refusal announces. */
  readonly maxRetryAfterSeconds: number;
  /** Called with each task's queue delay when it leaves the queue for a thread. */
  readonly onDelay?: (delayMs: number) => void;
  /** The clock (ms); `performance.now` unless a test drives it. */
  readonly now?: () => number;
  /** Small tasks a free thread takes together, when several wait; absent: one task per thread. */
  readonly batch?: BatchOptions;
  /**
   * The time a completed task spent on its thread, by the thread's own clock
   * (ms), read from its result; absent or undefined: the time from its start
   * to its answer here. The thread's clock leaves out the time the answer
   * waited for a busy event loop, which is no cost of the task's: a crowd
   * that saturates the loop must not make tasks look dear (ADR 0052).
   */
  readonly threadMsOf?: (result: unknown) => number | undefined;
}

/**
 * Batching: when a thread frees up and several small tasks wait, it takes up
 * to `maxTasks` of them in one message (one `postMessage`, one wake-up, one
 * answer), in the order the queue serves them. A batch holds one slot, as
 * one task does: a thread runs its tasks one after another.
 */
export interface BatchOptions {
  /** Most tasks in one batch. */
  readonly maxTasks: number;
  /**
   * Estimated thread time of a whole batch (ms): only tasks this small are
   * batched, and a batch's first answer waits about this long at most.
   */
  readonly maxCostMs: number;
  /** A new batch: its tasks' `start` add them to it, then `close` sends it. */
  readonly open: () => BatchSink;
}

/** Where the tasks of one batch gather before they go to a thread together. */
export interface BatchSink {
  close(): void;
}

/** The controller's state, for health and metrics. */
export interface SchedulerState {
  /** `lifo` while overloaded (newest first), else `fifo`. */
  readonly mode: ServeOrder;
  readonly queued: number;
  /** Estimated thread time of everything queued (ms). */
  readonly backlogMs: number;
  /** Queue delay of the last task that reached a thread (ms). */
  readonly lastDelayMs: number;
  readonly targetDelayMs: number;
  readonly intervalMs: number;
  /** Refusals and sheddings since start, by reason. */
  readonly refusals: Readonly<Record<RefusalReason, number>>;
  /** Keys with tasks waiting, deepest first. */
  readonly keys: readonly KeyDepth[];
  readonly jobs: { readonly running: number; readonly maxThreads: number };
  /** Batches sent since start, and the tasks they carried (`SchedulerOptions.batch`). */
  readonly batches: { readonly sent: number; readonly tasks: number };
}
