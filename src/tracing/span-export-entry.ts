/**
 * The span export thread (`span-export-thread.ts`): the OTLP exporter, its
 * serialization and its HTTP or gRPC run here, off the event loop that serves
 * requests (ADR 0048). The main thread posts finished spans in batches; they
 * become the SDK's spans again and go through its batch processor, as they
 * would on the main thread. What is lost on the way is counted and said
 * (ADR 0055): an export the collector did not take, a span past the queue.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode, setGlobalErrorHandler, type ExportResult } from '@opentelemetry/core';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { lowerThreadPriority } from '@corepool/core/host';
import { readableOf, type ExportedSpan } from './exported-span';
import { exporterFor, resourceOf, SCOPE, type TracingConfig } from './otlp-export';
import type { SpanDropReason } from './tracing-api';

/** A message to the export thread. */
export type ExportThreadMessage =
  | { readonly type: 'spans'; readonly spans: readonly ExportedSpan[] }
  | { readonly type: 'flush' | 'shutdown'; readonly id: number };

/** What the thread counted since it started. */
export interface ExportThreadCounts {
  readonly exportFailures: number;
  readonly dropped: Readonly<Record<SpanDropReason, number>>;
}

/** A diagnostic line of the SDK's, for the process's logger. */
export interface ExportThreadLog {
  readonly level: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  readonly message: string;
}

/**
 * The export thread's answers: a batch taken into its batch processor, a `flush` or
 * `shutdown` done, its counts, or a diagnostic line.
 */
export type ExportThreadReply =
  | { readonly taken: number }
  | { readonly id: number }
  | { readonly counts: ExportThreadCounts }
  | { readonly log: ExportThreadLog };

/** At most one warning of each kind this often, with what happened since the last. */
const WARNING_EVERY_MS = 60_000;
/** Most diagnostic lines a minute: a chatty SDK must not flood the log. */
const DIAG_LINES_PER_MINUTE = 30;
/** Counts reach the main thread this long after they change, once for many changes. */
const COUNTS_AFTER_MS = 100;

const DIAG_LEVELS: Record<TracingConfig['logLevel'], DiagLogLevel> = {
  none: DiagLogLevel.NONE,
  error: DiagLogLevel.ERROR,
  warn: DiagLogLevel.WARN,
  info: DiagLogLevel.INFO,
  debug: DiagLogLevel.DEBUG,
  verbose: DiagLogLevel.VERBOSE,
  all: DiagLogLevel.ALL,
};

const config = workerData as TracingConfig;
// Spans are telemetry: where cores are short, the event loop and the tasks go first, as far
// as WORKER_NICE_INCREMENT lowers the task threads.
lowerThreadPriority(config.niceIncrement);

const reply = (answer: ExportThreadReply): void => parentPort?.postMessage(answer);

/** The SDK's diagnostics, at `OTEL_LOG_LEVEL`, go to the process's logger, bounded. */
let diagLines = 0;
let diagWindow = 0;
const forward =
  (level: ExportThreadLog['level']) =>
  (message: string, ...args: unknown[]): void => {
    const now = Date.now();
    if (now - diagWindow >= WARNING_EVERY_MS) {
      diagWindow = now;
      diagLines = 0;
    }
    if (++diagLines > DIAG_LINES_PER_MINUTE) return;
    const detail = args.map((arg) => (arg instanceof Error ? arg.message : String(arg)));
    reply({ log: { level, message: [message, ...detail].join(' ') } });
  };
diag.setLogger(
  {
    error: forward('error'),
    warn: forward('warn'),
    info: forward('info'),
    debug: forward('debug'),
    verbose: forward('trace'),
  },
  { logLevel: DIAG_LEVELS[config.logLevel], suppressOverrideMessage: true },
);

const counts = { exportFailures: 0, dropped: { export_failed: 0, queue_full: 0 } };
let countsTimer: NodeJS.Timeout | undefined;
const counted = (): void => {
  countsTimer ??= setTimeout(postCounts, COUNTS_AFTER_MS);
};
function postCounts(): void {
  clearTimeout(countsTimer);
  countsTimer = undefined;
  reply({ counts: { exportFailures: counts.exportFailures, dropped: { ...counts.dropped } } });
}

/** A warning at once, then at most one a window, saying how many happened since the last. */
class ThrottledWarning {
  private last = -Infinity;
  private events = 0;
  private spans = 0;

  constructor(private readonly say: (events: number, spans: number, detail: string) => string) {}

  add(spans: number, detail: string): void {
    this.events += 1;
    this.spans += spans;
    const now = Date.now();
    if (now - this.last < WARNING_EVERY_MS) return;
    diag.warn(this.say(this.events, this.spans, detail));
    this.last = now;
    this.events = 0;
    this.spans = 0;
  }
}

const failedExports = new ThrottledWarning(
  (exports, spans, detail) =>
    `Span export failed (${detail}): ${exports} export(s), ${spans} span(s) lost since the last warning`,
);
const fullQueue = new ThrottledWarning(
  (_drops, spans) =>
    `Spans dropped: ${spans} span(s) found ${config.maxQueueSize} already held for export (OTEL_BSP_MAX_QUEUE_SIZE) since the last warning`,
);

/** Export failures this thread counted and warned about: the batch processor hands them on again. */
const reported = new WeakSet<Error>();
setGlobalErrorHandler((error) => {
  if (error instanceof Error && reported.has(error)) return;
  diag.warn(`OpenTelemetry: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
});

/** Spans handed to the batch processor and not yet answered by the exporter: queued or being sent. */
let held = 0;

/** The configured exporter, each answer counted: a failed batch is lost (the exporter has retried). */
class CountingExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      held -= spans.length;
      if (result.code === ExportResultCode.SUCCESS) return done(result);
      const error = result.error ?? new Error('the exporter gave no reason');
      reported.add(error);
      counts.exportFailures += 1;
      counts.dropped.export_failed += spans.length;
      counted();
      failedExports.add(spans.length, error.message);
      done({ code: result.code, error });
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

const resource = resourceOf(config);
const processor = new BatchSpanProcessor({
  exporter: new CountingExporter(exporterFor(config)),
  scheduledDelayMillis: config.exportDelayMs,
  exportTimeoutMillis: config.batchTimeoutMs,
  maxQueueSize: config.maxQueueSize,
  maxExportBatchSize: config.maxExportBatchSize,
});

parentPort?.on('message', (message: ExportThreadMessage) => {
  switch (message.type) {
    case 'spans': {
      let dropped = 0;
      for (const span of message.spans) {
        // Bounded here, counting the batch being sent: the processor's own bound counts only its queue.
        if (held >= config.maxQueueSize) {
          dropped += 1;
          continue;
        }
        held += 1;
        processor.onEnd(readableOf(span, resource, SCOPE));
      }
      if (dropped > 0) {
        counts.dropped.queue_full += dropped;
        counted();
        fullQueue.add(dropped, '');
      }
      reply({ taken: message.spans.length });
      return;
    }
    case 'flush':
    case 'shutdown': {
      const done = message.type === 'flush' ? processor.forceFlush() : processor.shutdown();
      // A collector that is down fails the export: spans are telemetry, the answer still comes.
      void done
        .catch(() => undefined)
        .then(() => {
          postCounts();
          reply({ id: message.id });
        });
      return;
    }
  }
});
