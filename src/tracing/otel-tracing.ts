import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Baggage,
  type Context,
  type Span,
  type SpanContext,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { AppError } from '../common/app-error';
import type { TaskResponse, TaskTraceParent } from '@corepool/core/host';
import type { TaskTrace } from '@corepool/core/host';
import { ATTRIBUTE_PREFIX, type ThreadSpanRecord } from '@corepool/core/host';
import { serverAttributes, serverSpanName, type ServerRequestFacts } from './http-attributes';
import { traceHeadersOf, type StoredTraceContext } from './job-trace';
import { JOBS_DESTINATION, messagingAttributes } from './messaging-attributes';
import { SCOPE, type TracingConfig } from './otlp-export';
import { samplingOf, type Sampling } from './sampling';
import { SpanExportThread } from './span-export-thread';
import type {
  JobRunFacts,
  JobRunTrace,
  JobSubmitTrace,
  RequestSpan,
  TraceIds,
  Tracing,
  TracingStats,
} from './tracing-api';

/** The span of every request not sampled before the SDK was asked (`sampling.ts`): it records nothing. */
const NOT_SAMPLED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Longest the app's close waits for the last spans to be exported. */
const EXPORT_ON_CLOSE_MS = 2_000;

/**
 * The OpenTelemetry SDK, set up from the standard `OTEL_*` variables
 * (`src/config/`): one tracer provider per process, whose spans a thread of
 * their own exports (`span-export-thread.ts`). Loaded only when tracing is
 * on (`tracing.ts`). No context manager: the request's span travels with the
 * request and the task explicitly, which costs nothing on the requests that
 * are not sampled.
 */
export class OtelTracing implements Tracing {
  private readonly provider: TracerProvider;
  private readonly processor: SpanExportThread;
  private readonly tracer: Tracer;
  /** `OTEL_PROPAGATORS`: what is read from a request; undefined: `none`. */
  private readonly propagator: TextMapPropagator | undefined;
  /** What a job stores and its runs read: its submit span's context, and the request's baggage. */
  private readonly stored = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  });
  /** The callers' baggage of sampled requests, for the jobs they submit. */
  private readonly baggage = new WeakMap<Span, Baggage>();
  private readonly sampling: Sampling;
  private readonly messaging: TracingConfig['jobsSystem'];

  constructor(config: TracingConfig, logger: Logger) {
    this.sampling = samplingOf(config);
    this.messaging = config.jobsSystem;
    this.propagator = propagatorOf(config.propagators);
    this.processor = new SpanExportThread(config, logger);
    this.provider = new TracerProvider({
      // The resource is the export thread's (`resourceOf`): spans cross to it without one.
      sampler: this.sampling.sampler,
      spanLimits: config.spanLimits,
      spanProcessors: [this.processor],
    });
    this.tracer = this.provider.getTracer(SCOPE.name);
  }

  startRequest(method: string, route: string, headers: IncomingHttpHeaders): Span {
    const parent =
      this.propagator === undefined ||
      (headers.traceparent === undefined && headers.baggage === undefined)
        ? ROOT_CONTEXT
        : this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const parentSpan = trace.getSpanContext(parent);
    const { rootRatio, cap } = this.sampling;
    if (rootRatio !== undefined && parentSpan === undefined && !(Math.random() < rootRatio)) {
      return NOT_SAMPLED;
    }
    // Past the cap, a request is answered untraced before the SDK is asked, whatever its flags
    // (ADR 0055): a caller that asks for every trace then costs one check.
    if (!cap.hasRoom()) {
      if (this.sampling.wouldKeep(parentSpan)) cap.capped += 1;
      return NOT_SAMPLED;
    }
    const span = this.tracer.startSpan(
      serverSpanName(method, route),
      { kind: SpanKind.SERVER },
      parent,
    );
    if (span.isRecording()) {
      const baggage = propagation.getBaggage(parent);
      if (baggage !== undefined) this.baggage.set(span, baggage);
    }
    return span;
  }

  describeRequest(span: Span, request: ServerRequestFacts): void {
    // Set once sampled: the SDK copies a span's start attributes before it decides, and most
    // requests are not sampled at a low ratio.
    span.setAttributes(serverAttributes(request));
  }

  endRequest(span: Span, statusCode: number, code: string | undefined): void {
    if (!span.isRecording()) return;
    span.setAttribute('http.response.status_code', statusCode);
    if (code !== undefined) span.setAttribute(`${ATTRIBUTE_PREFIX}error.code`, code);
    // A server span is an error for the server's own failures only (OpenTelemetry's HTTP conventions).
    if (statusCode >= 500) {
      span.setAttribute('error.type', code ?? String(statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  startTask(parent: RequestSpan, task: string, inputSize: number): TaskTrace | undefined {
    if (!parent.isRecording()) return undefined;
    const span = this.tracer.startSpan(
      `schedule ${task}`,
      { attributes: { [`${ATTRIBUTE_PREFIX}task.name`]: task } },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    return new SchedulerSpan(span, inputSize, (records, context) =>
      this.processor.addThreadSpans(context.traceId, records),
    );
  }

  startJobSubmit(parent: RequestSpan, task: string): JobSubmitTrace | undefined {
    if (!parent.isRecording()) return undefined;
    const span = this.tracer.startSpan(
      `submit ${JOBS_DESTINATION}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...messagingAttributes(this.messaging, 'submit'),
          [`${ATTRIBUTE_PREFIX}task.name`]: task,
        },
      },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    let context: Context = trace.setSpan(ROOT_CONTEXT, span);
    const baggage = this.baggage.get(parent);
    if (baggage !== undefined) context = propagation.setBaggage(context, baggage);
    const carrier: Record<string, string> = {};
    this.stored.inject(context, carrier, defaultTextMapSetter);
    return new JobSubmitSpan(span, JSON.stringify(carrier));
  }

  startJobRun(context: StoredTraceContext, facts: JobRunFacts): JobRunTrace | undefined {
    const headers = traceHeadersOf(context);
    if (headers === undefined) return undefined;
    // The stored submit span is the parent: the sampler follows the submitter's decision.
    const parent = this.stored.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(
      `process ${JOBS_DESTINATION}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          ...messagingAttributes(this.messaging, 'process'),
          'messaging.message.id': facts.jobId,
          [`${ATTRIBUTE_PREFIX}task.name`]: facts.task,
          [`${ATTRIBUTE_PREFIX}job.id`]: facts.jobId,
          [`${ATTRIBUTE_PREFIX}job.attempt`]: facts.attempt,
        },
      },
      parent,
    );
    return new JobRunSpan(span);
  }

  idsOf(span: RequestSpan): TraceIds | undefined {
    const context = span.spanContext();
    return (context.traceFlags & TraceFlags.SAMPLED) === 0
      ? undefined
      : { traceId: context.traceId, spanId: context.spanId };
  }

  /**
   * Exports what is buffered, within a bound: a collector that is down or slow must
   * neither fail the process's graceful exit nor hold it up (spans are telemetry, and
   * the exporter's own timeout is 10 s).
   */
  stats(): TracingStats {
    return { ...this.processor.stats(), tracesCapped: this.sampling.cap.capped };
  }

  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, EXPORT_ON_CLOSE_MS);
    });
    await Promise.race([this.provider.shutdown().catch(() => undefined), gaveUp]);
    clearTimeout(timer);
  }
}

/**
 * A task's time in the scheduler: from its submission to a thread taking it
 * (or its refusal, with the reason). The thread's run span is its child.
 */
class SchedulerSpan implements TaskTrace {
  readonly parent: TaskTraceParent;
  private records: readonly ThreadSpanRecord[] | undefined;
  private startedAt: number | undefined;

  constructor(
    private readonly span: Span,
    inputSize: number,
    private readonly exportRecords: (
      records: readonly ThreadSpanRecord[],
      parent: SpanContext,
    ) => void,
  ) {
    const { traceId, spanId } = span.spanContext();
    this.parent = { traceId, spanId, inputSize };
  }

  answered(response: TaskResponse): void {
    this.records = response.spans;
    this.startedAt = response.startedAt;
  }

  settled(outcome: string, error: AppError | undefined): void {
    const { span } = this;
    const attributes: Attributes = { [`${ATTRIBUTE_PREFIX}task.outcome`]: outcome };
    if (this.startedAt === undefined) {
      // Never reached a thread: refused or shed by the scheduler, or its thread was lost.
      attributes[`${ATTRIBUTE_PREFIX}scheduler.decision`] =
        outcome === 'rejected' ? 'refused' : 'lost';
      if (error?.facts.reason !== undefined) {
        attributes[`${ATTRIBUTE_PREFIX}scheduler.reason`] = error.facts.reason;
      }
    } else {
      attributes[`${ATTRIBUTE_PREFIX}scheduler.decision`] = 'admitted';
    }
    if (error !== undefined) {
      attributes['error.type'] = error.code;
      attributes[`${ATTRIBUTE_PREFIX}error.code`] = error.code;
    }
    span.setAttributes(attributes);
    if (error !== undefined && this.startedAt === undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.detail });
    }
    span.end(this.startedAt);
    if (this.records !== undefined) {
      this.exportRecords(withCode(this.records, error), span.spanContext());
    }
  }
}

/** `submit jobs`: from the submission's validated payload to the job stored (or refused). */
class JobSubmitSpan implements JobSubmitTrace {
  constructor(
    private readonly span: Span,
    readonly context: StoredTraceContext,
  ) {}

  ended(outcome: { readonly jobId: string; readonly created: boolean } | AppError): void {
    const { span } = this;
    if ('jobId' in outcome) {
      span.setAttributes({
        'messaging.message.id': outcome.jobId,
        [`${ATTRIBUTE_PREFIX}job.id`]: outcome.jobId,
        // false: an idempotent retry, answered with the original job (whose runs continue the original's trace).
        [`${ATTRIBUTE_PREFIX}job.created`]: outcome.created,
      });
    } else {
      span.setAttributes({
        'error.type': outcome.code,
        [`${ATTRIBUTE_PREFIX}error.code`]: outcome.code,
      });
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.detail });
    }
    span.end();
  }
}

/** `process jobs`: one run of a job, from its claim to how it ended. */
class JobRunSpan implements JobRunTrace {
  constructor(readonly span: Span) {}

  ended(
    outcome: string,
    error: { readonly code: string; readonly detail: string } | undefined,
  ): void {
    const { span } = this;
    span.setAttribute(`${ATTRIBUTE_PREFIX}job.outcome`, outcome);
    if (error !== undefined) {
      span.setAttributes({
        'error.type': error.code,
        [`${ATTRIBUTE_PREFIX}error.code`]: error.code,
      });
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.detail });
    }
    span.end();
  }
}

/**
 * The run span carries the code the client got: decided on the main thread
 * (a cancelled task's code is its cancellation's: TASK_TIMEOUT, TASK_CANCELLED…).
 */
function withCode(
  records: readonly ThreadSpanRecord[],
  error: AppError | undefined,
): readonly ThreadSpanRecord[] {
  const [run, ...children] = records;
  if (run === undefined || error === undefined) return records;
  const coded: ThreadSpanRecord = {
    ...run,
    status: 'error',
    statusMessage: run.statusMessage ?? error.detail,
    attributes: {
      ...run.attributes,
      'error.type': error.code,
      [`${ATTRIBUTE_PREFIX}error.code`]: error.code,
    },
  };
  return [coded, ...children];
}

/** The configured formats, read in their order; none: requests are never continued. */
function propagatorOf(names: TracingConfig['propagators']): TextMapPropagator | undefined {
  if (names.length === 0) return undefined;
  return new CompositePropagator({
    propagators: names.map((name) =>
      name === 'tracecontext' ? new W3CTraceContextPropagator() : new W3CBaggagePropagator(),
    ),
  });
}
