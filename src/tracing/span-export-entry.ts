/**
 * The span export thread (`span-export-thread.ts`): the OTLP exporter, its
 * serialization and its HTTP or gRPC run here, off the event loop that serves
 * requests (ADR 0048). The main thread posts finished spans in batches; they
 * become the SDK's spans again and go through its batch processor, as they
 * would on the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import { LOWEST_PRIORITY, lowerThreadPriority } from '../workers/thread-priority';
import { readableOf, type ExportedSpan } from './exported-span';
import { exporterFor, resourceOf, SCOPE, type TracingConfig } from './otlp-export';

/** A message to the export thread. */
export type ExportThreadMessage =
  | { readonly type: 'spans'; readonly spans: readonly ExportedSpan[] }
  | { readonly type: 'flush' | 'shutdown'; readonly id: number };

/** The export thread's answer: a batch taken into its batch processor, or a `flush` or `shutdown` done. */
export type ExportThreadReply = { readonly taken: number } | { readonly id: number };

const config = workerData as TracingConfig;
// Spans are telemetry: where cores are short, the event loop and the tasks go first.
lowerThreadPriority(LOWEST_PRIORITY);
const resource = resourceOf(config);
const processor = new BatchSpanProcessor({
  exporter: exporterFor(config),
  scheduledDelayMillis: config.exportDelayMs,
});

parentPort?.on('message', (message: ExportThreadMessage) => {
  switch (message.type) {
    case 'spans':
      for (const span of message.spans) processor.onEnd(readableOf(span, resource, SCOPE));
      reply({ taken: message.spans.length });
      return;
    case 'flush':
    case 'shutdown': {
      const done = message.type === 'flush' ? processor.forceFlush() : processor.shutdown();
      // A collector that is down fails the export: spans are telemetry, the answer still comes.
      void done.catch(() => undefined).then(() => reply({ id: message.id }));
      return;
    }
  }
});

const reply = (answer: ExportThreadReply): void => parentPort?.postMessage(answer);
