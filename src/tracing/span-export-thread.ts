import { TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { extname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ThreadSpanRecord } from '@corepool/core/host';
import { exportedSpanOf, exportedThreadSpanOf, type ExportedSpan } from './exported-span';
import type { TracingConfig } from './otlp-export';
import type {
  ExportThreadCounts,
  ExportThreadMessage,
  ExportThreadReply,
} from './span-export-entry';
import type { TracingStats } from './tracing-api';

/** Spans posted at once: one message (and one wake-up of the thread) per batch, not per span. */
const POST_BATCH = 128;
/** Longest a finished span waits on the main thread before it is posted; the thread's batch processor then waits its own delay. */
const POST_AFTER_MS = 50;
/** At most one warning this often about spans dropped, with how many since the last. */
const DROP_WARNING_EVERY_MS = 60_000;

/**
 * The main thread's span processor: it posts finished spans, as plain data,
 * to a thread of their own that exports them (`span-export-entry.ts`): on the
 * main thread, the exporter's serialization and its connection would cost
 * more than making the span, while a span posted in a batch costs a copy
 * (ADR 0048). The thread starts with the first span.
 */
export class SpanExportThread implements SpanProcessor {
  private thread: Worker | undefined;
  private stopped = false;
  private spans: ExportedSpan[] = [];
  private postTimer: NodeJS.Timeout | undefined;
  private untaken = 0;
  private dropped = 0;
  private lastDropWarning = -Infinity;
  private lastRequest = 0;
  private readonly replies = new Map<number, () => void>();
  /** What the thread counted, as it last said. */
  private threadCounts: ExportThreadCounts = {
    exportFailures: 0,
    dropped: { export_failed: 0, queue_full: 0 },
  };
  /** Spans dropped here, the thread behind: counted as a full queue, the same bound. */
  private droppedBehind = 0;
  /**
   * Most spans posted and not yet taken by the thread, as many as it holds for export
   * (`OTEL_BSP_MAX_QUEUE_SIZE`): a thread short of CPU (its priority is lowered) drops
   * spans instead of letting its messages pile up in memory.
   */
  private readonly maxUntaken: number;

  constructor(
    private readonly config: TracingConfig,
    private readonly logger: Logger,
  ) {
    this.maxUntaken = config.maxQueueSize;
  }

  /** Exports failed and spans dropped since the process started (the thread's as it last said). */
  stats(): Omit<TracingStats, 'tracesCapped'> {
    const { exportFailures, dropped } = this.threadCounts;
    return {
      exportFailures,
      spansDropped: { ...dropped, queue_full: dropped.queue_full + this.droppedBehind },
    };
  }

  onStart(_span: Span): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (!this.hasRoom(1)) return;
    this.spans.push(exportedSpanOf(span));
    this.buffered();
  }

  /** A task's spans as its thread recorded them (`thread-trace.ts`). */
  addThreadSpans(traceId: string, records: readonly ThreadSpanRecord[]): void {
    if (this.stopped || !this.hasRoom(records.length)) return;
    for (const record of records) this.spans.push(exportedThreadSpanOf(record, traceId));
    this.buffered();
  }

  forceFlush(): Promise<void> {
    return this.request('flush');
  }

  async shutdown(): Promise<void> {
    await this.request('shutdown');
    this.stopped = true;
    await this.thread?.terminate();
  }

  private hasRoom(count: number): boolean {
    if (this.untaken + this.spans.length + count <= this.maxUntaken) return true;
    this.dropped += count;
    this.droppedBehind += count;
    const now = Date.now();
    if (now - this.lastDropWarning >= DROP_WARNING_EVERY_MS) {
      this.logger.warn(
        { dropped: this.dropped },
        'Spans dropped: the span export thread is behind (short of CPU)',
      );
      this.dropped = 0;
      this.lastDropWarning = now;
    }
    return false;
  }

  private buffered(): void {
    if (this.spans.length >= POST_BATCH) this.post();
    else this.postTimer ??= setTimeout(() => this.post(), POST_AFTER_MS).unref();
  }

  private post(): void {
    clearTimeout(this.postTimer);
    this.postTimer = undefined;
    if (this.spans.length === 0) return;
    this.send({ type: 'spans', spans: this.spans });
    this.untaken += this.spans.length;
    this.spans = [];
  }

  /** Posts what is buffered, then asks the thread to flush or shut down, and waits for its answer. */
  private request(type: 'flush' | 'shutdown'): Promise<void> {
    this.post();
    if (this.thread === undefined || this.stopped) return Promise.resolve();
    const id = ++this.lastRequest;
    return new Promise((resolve) => {
      this.replies.set(id, resolve);
      this.send({ type, id });
    });
  }

  private send(message: ExportThreadMessage): void {
    (this.thread ??= this.start()).postMessage(message);
  }

  private start(): Worker {
    const extension = extname(__filename);
    const thread = new Worker(resolve(__dirname, `span-export-entry${extension}`), {
      name: 'corepool span export',
      workerData: this.config,
      // In development and in jest this file is TypeScript, and so is the entry.
      execArgv: extension === '.ts' ? ['--require', require.resolve('tsx/cjs')] : undefined,
    });
    // Spans are telemetry: they never keep the process from exiting.
    thread.unref();
    thread.on('message', (reply: ExportThreadReply) => {
      if ('taken' in reply) {
        this.untaken -= reply.taken;
      } else if ('counts' in reply) {
        this.threadCounts = reply.counts;
      } else if ('log' in reply) {
        // The SDK's diagnostics, at OTEL_LOG_LEVEL (the thread filters and bounds them).
        this.logger[reply.log.level]({ component: 'opentelemetry' }, reply.log.message);
      } else {
        this.replies.get(reply.id)?.();
        this.replies.delete(reply.id);
      }
    });
    thread.on('error', (error) =>
      this.logger.error(
        { err: error },
        'The span export thread failed: no span is exported any more',
      ),
    );
    thread.on('exit', () => {
      this.stopped = true;
      for (const resolveReply of this.replies.values()) resolveReply();
      this.replies.clear();
    });
    return thread;
  }
}
