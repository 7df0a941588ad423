import type { Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../common/app-error';
import type { TaskResponse, TaskTraceParent } from '../workers/task-message';

/** A request's server span: opaque outside this folder, so nothing else depends on the SDK. */
export type RequestSpan = Span;

/** The trace and span ids a log line or a problem body carries. */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

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
  settled(outcome: string, error: AppError | undefined): void;
}

/**
 * What corepool traces (docs/observability.md). Present only when
 * OpenTelemetry is configured: the SDK is loaded on start, never imported
 * otherwise, and code on the hot path asks `activeTracing()` and goes on at
 * once when it answers undefined.
 */
export interface Tracing {
  /** The server span of a request, continuing its W3C `traceparent`/`tracestate`. */
  startRequest(
    method: string,
    route: string,
    headers: IncomingHttpHeaders,
    path: string,
  ): RequestSpan;
  endRequest(span: RequestSpan, statusCode: number, code: string | undefined): void;
  /** The spans of a task the request runs; undefined when the request is not sampled. */
  startTask(parent: RequestSpan, task: string, inputSize: number): TaskTrace | undefined;
  /** The ids of a sampled span; undefined for one that is not recorded. */
  idsOf(span: RequestSpan): TraceIds | undefined;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}
