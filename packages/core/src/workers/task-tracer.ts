import type { CorepoolError } from '../common/app-error';
import type { TaskResponse, TaskTraceParent } from './task-message';

/**
 * The seam through which the pool has a task's spans made, without knowing
 * the tracing SDK: `src/tracing/` implements it and registers itself when
 * tracing starts, so tracing depends on the pool and never the other way
 * (ADR 0048). Off, nothing is registered and the pool asks nothing.
 */

/** A request's server span as the pool carries it: opaque here, made and read by the tracer only. */
export type TraceParentSpan = object;

/**
 * One task's spans on the main thread: its scheduler span (admission and the
 * wait for a thread), and the spans its thread recorded (`thread-trace.ts`).
 */
export interface TaskTrace {
  /** For the task's request: the thread's run span is made a child of the scheduler span. */
  readonly parent: TaskTraceParent;
  /** The thread answered: the wait ended when it took the task. */
  answered(response: TaskResponse): void;
  /** The task settled: its spans end, with its error's code when it failed. */
  settled(outcome: string, error: CorepoolError | undefined): void;
}

/** Makes the spans of a task whose request is traced. */
export interface TaskTracer {
  /** The spans of a task the request runs; undefined when the request is not sampled. */
  startTask(parent: TraceParentSpan, task: string, inputSize: number): TaskTrace | undefined;
}

let active: TaskTracer | undefined;

/** Registered by tracing when it starts, cleared when it stops. */
export function useTaskTracer(tracer: TaskTracer | undefined): void {
  active = tracer;
}

/** The process's task tracer, when tracing is on. */
export const activeTaskTracer = (): TaskTracer | undefined => active;
