import type { TaskInputCode } from '../tasks/task-input-error';
import type { CancelFlag } from './cancel-flag';
import type { ThreadSpanRecord, TraceParentIds } from './thread-trace';

/** A traced task's parent span, and what the thread's run span says of its input. */
export interface TaskTraceParent extends TraceParentIds {
  /** The task's size as its definition measures it (`TaskDefinition.size`). */
  readonly inputSize: number;
}

/** What the main thread posts to a worker thread for one task. */
export interface TaskRequest {
  readonly task: string;
  /** The validated input (a plain object: it crosses threads by structured clone). */
  readonly input: object;
  /** Raw body of a binary task; transferred, not cloned, when large. */
  readonly body?: Uint8Array;
  /** The id its progress reports carry (`task-progress.ts`), when the caller follows them. */
  readonly progress?: number;
  /** Set by the main thread when the task is cancelled; read by the task (`cancel-flag.ts`). */
  readonly cancelFlag?: CancelFlag;
  /** Set when the request is traced: the thread records the task's run span under it (`thread-trace.ts`). */
  readonly trace?: TaskTraceParent;
}

/** Times measured by the thread itself, on a clock shared by all threads (epoch ms). */
export interface TaskTiming {
  readonly startedAt: number;
  readonly runMs: number;
  readonly threadId: number;
  /** The thread's V8 heap in use after the task, for recycling on memory. */
  readonly heapUsedBytes: number;
  /** How many progress reports the task sent, when its progress was followed. */
  readonly progressReports?: number;
  /** The spans the thread recorded, when the request was traced (`thread-trace.ts`). */
  readonly spans?: readonly ThreadSpanRecord[];
}

/**
 * What a thread answers. A task's own failure is an answer, not a rejection,
 * so that a rejected promise always means the thread itself failed (crash,
 * heap exhausted, aborted): the two need different codes.
 */
export type TaskResponse =
  | (TaskTiming & { readonly ok: true; readonly value: unknown })
  | (TaskTiming & {
      readonly ok: false;
      /**
       * `input`: the client's data was unusable (400); `task`: the task threw (500);
       * `cancelled`: the task stopped because it was cancelled (the cancellation's code).
       */
      readonly kind: 'input' | 'task' | 'cancelled';
      readonly message: string;
      readonly property?: string;
      /** For `input`: the stable code the client gets (VALIDATION_FAILED when absent). */
      readonly code?: TaskInputCode;
    });
