import type { Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../common/app-error';
import type { TaskTrace, TaskTracer } from '@corepool/core/host';
import type { ServerRequestFacts } from './http-attributes';
import type { StoredTraceContext } from './job-trace';

export type { TaskTrace } from '@corepool/core/host';
export type { ServerRequestFacts } from './http-attributes';

/** A request's server span: opaque outside this folder, so nothing else depends on the SDK. */
export type RequestSpan = Span;

/** The trace and span ids a log line or a problem body carries. */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

/**
 * A job submission's span (`submit jobs`), child of the request's server
 * span: the context to store with the job is its own, so every run of the
 * job is its child (ADR 0048).
 */
export interface JobSubmitTrace {
  readonly context: StoredTraceContext;
  /** The submission answered: the job's id (an idempotent retry's is the original's), or its error. */
  ended(outcome: { readonly jobId: string; readonly created: boolean } | AppError): void;
}

/** Which run of which job a run span is. */
export interface JobRunFacts {
  readonly jobId: string;
  readonly task: string;
  /** 1 for the first run; a retry or a takeover counts. */
  readonly attempt: number;
}

/**
 * One run of a job (`process jobs`), on whichever process claimed it,
 * child of the stored submit span; the pool's `schedule` and `run` spans
 * are its children.
 */
export interface JobRunTrace {
  /** The parent of the task's spans (`WorkerPoolService.run`'s `trace`). */
  readonly span: RequestSpan;
  /** The run ended: `outcome` is the job's (succeeded, failed, cancelled, retry), with its error's code. */
  ended(
    outcome: string,
    error: { readonly code: string; readonly detail: string } | undefined,
  ): void;
}

/**
 * What corepool traces (docs/observability.md). Present only when
 * OpenTelemetry is configured: the SDK is loaded on start, never imported
 * otherwise, and code on the hot path asks `activeTracing()` and goes on at
 * once when it answers undefined.
 */
export interface Tracing extends TaskTracer {
  /** The server span of a request, continuing its context as `OTEL_PROPAGATORS` reads it. */
  startRequest(method: string, route: string, headers: IncomingHttpHeaders): RequestSpan;
  /** A sampled request's HTTP attributes (`span.isRecording()`): only then are they read. */
  describeRequest(span: RequestSpan, request: ServerRequestFacts): void;
  endRequest(span: RequestSpan, statusCode: number, code: string | undefined): void;
  /** The spans of a task the request runs; undefined when the request is not sampled. */
  startTask(parent: RequestSpan, task: string, inputSize: number): TaskTrace | undefined;
  /** A job submission's span and the context to store; undefined when the request is not sampled. */
  startJobSubmit(parent: RequestSpan, task: string): JobSubmitTrace | undefined;
  /** A run of a job that stored a context; undefined when the stored context is unreadable. */
  startJobRun(context: StoredTraceContext, facts: JobRunFacts): JobRunTrace | undefined;
  /** The ids of a sampled span; undefined for one that is not recorded. */
  idsOf(span: RequestSpan): TraceIds | undefined;
  /** What was lost or refused so far (`compute_tracing_*` metrics). */
  stats(): TracingStats;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

/** Why spans were not exported, counted since the process started. */
export const SPAN_DROP_REASONS = ['export_failed', 'queue_full'] as const;
export type SpanDropReason = (typeof SPAN_DROP_REASONS)[number];

/** Counts since the process started. */
export interface TracingStats {
  /** Exports the collector did not take (refused, unreachable, timed out). */
  readonly exportFailures: number;
  /** Finished spans not exported, by reason. */
  readonly spansDropped: Readonly<Record<SpanDropReason, number>>;
  /** Traces not recorded because `TRACING_MAX_TRACES_PER_SECOND` was reached. */
  readonly tracesCapped: number;
}
