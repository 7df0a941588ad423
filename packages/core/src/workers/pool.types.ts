import type { CorepoolError } from '../common/app-error';
import type { SchedulerState } from '../scheduler/task-scheduler';
import type { TaskTrace, TraceParentSpan } from './task-tracer';
import type { CancelSignal } from './cancellation';
import type { Percentiles } from './rolling-percentiles';
import type { TaskOutcome } from './task-failure';
import type { TaskProgress } from './task-progress';
import type { RecycleCause } from './thread-recycler';
import type { TaskCaller } from './scheduler-ticket';

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

/** How long a task that reached a thread waited and ran. */
export interface TaskTimes {
  readonly waitMs: number;
  readonly runMs: number;
}

export interface RunOptions extends TaskCaller {
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
  readonly trace?: TraceParentSpan;
}

export interface TaskResult {
  readonly value: unknown;
  readonly waitMs: number;
  readonly runMs: number;
  /** Worker thread that ran the task (0: inline, on the main thread). */
  readonly threadId: number;
}

/** Which task, for which request. */
export interface TaskRef {
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
  readonly error?: CorepoolError;
  /** The task's trace and scheduler span, when its request is traced and sampled. */
  readonly traceId?: string;
  readonly spanId?: string;
}

/** What replacing threads has cost so far (`PoolThreads`). */
export interface ThreadCounts {
  /** Threads replaced after dying (crash, memory, terminated after the grace); recycling is counted apart. */
  readonly threadRestarts: number;
  readonly threadsRecycled: number;
  /** Threads replaced, by cause. */
  readonly threadsReplaced: Readonly<Record<ThreadReplaceCause, number>>;
  /** Cancelled tasks that had reached a thread, by how they stopped. */
  readonly tasksStopped: Readonly<Record<TaskStopKind, number>>;
}

export interface PoolStats extends ThreadCounts {
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
  readonly waitMs: Percentiles;
  readonly runMs: Percentiles;
  /** The scheduler's state (`src/scheduler/`); undefined when tasks run inline. */
  readonly scheduler: SchedulerState | undefined;
  /** Threads are started and warm, and the pool still accepts tasks. */
  readonly ready: boolean;
  readonly accepting: boolean;
}
