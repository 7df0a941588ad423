import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import pino from 'pino';
import { startOtlpReceiver, type OtlpReceiver } from '../../test/support/otlp-receiver';
import type { AppConfig } from '../config/app-config';
import type { ThreadSpanRecord } from '../workers/thread-trace';
import { SpanExportThread } from './span-export-thread';

type Protocol = AppConfig['tracing']['protocol'];

const configFor = (endpoint: string, protocol: Protocol): AppConfig['tracing'] => ({
  enabled: true,
  endpoint,
  protocol,
  serviceName: 'corepool-test',
  sampler: 'always_on',
  samplerRatio: 1,
  exportDelayMs: 20,
  resourceAttributes: { 'deployment.environment.name': 'test' },
});

describe('the span export thread', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(() => receiver.close());

  it.each<Protocol>(['http/json', 'http/protobuf'])(
    'exports the main thread spans and a task thread records as they were (%s)',
    async (protocol) => {
      const exportThread = new SpanExportThread(
        configFor(receiver.url, protocol),
        pino({ enabled: false }),
      );
      const provider = new TracerProvider({ spanProcessors: [exportThread] });
      const tracer = provider.getTracer('corepool');
      const server = tracer.startSpan('POST /api/tasks/:name', {
        attributes: { 'http.route': '/x' },
      });
      const { traceId, spanId } = server.spanContext();
      const schedule = tracer.startSpan(
        'schedule compute',
        {},
        trace.setSpan(ROOT_CONTEXT, server),
      );
      schedule.setStatus({ code: SpanStatusCode.ERROR, message: 'refused' });
      schedule.end();
      server.end();
      const startMs = Date.now() - 5;
      const run: ThreadSpanRecord = {
        spanId: 'ab'.repeat(8),
        parentSpanId: schedule.spanContext().spanId,
        name: 'run compute',
        startMs,
        endMs: startMs + 4.5,
        attributes: { 'thread.id': 3, 'corepool.task.name': 'compute' },
        events: [{ name: 'halfway', timeMs: startMs + 2 }],
        status: 'ok',
      };
      exportThread.addThreadSpans(traceId, [run]);
      // The flush answers once the thread's exporter has had the collector's answer.
      await provider.forceFlush();

      expect(receiver.spans).toHaveLength(3);
      const named = (name: string) => receiver.spans.find((span) => span.name === name);
      expect(named('POST /api/tasks/:name')).toMatchObject({
        traceId,
        spanId,
        parentSpanId: '',
        attributes: { 'http.route': '/x' },
        serviceName: 'corepool-test',
        resource: { 'process.pid': process.pid, 'deployment.environment.name': 'test' },
      });
      expect(named('schedule compute')).toMatchObject({
        traceId,
        parentSpanId: spanId,
        statusCode: SpanStatusCode.ERROR,
      });
      expect(named('run compute')).toMatchObject({
        traceId,
        spanId: run.spanId,
        parentSpanId: run.parentSpanId,
        statusCode: SpanStatusCode.OK,
        attributes: { 'thread.id': 3, 'corepool.task.name': 'compute' },
        events: ['halfway'],
      });
      expect(named('run compute')?.startMs).toBeCloseTo(startMs, 2);
      expect(named('run compute')?.endMs).toBeCloseTo(startMs + 4.5, 2);
      // The SDK's own times, as it recorded them.
      const serverTimes = (server as unknown as ReadableSpan).startTime;
      expect(named('POST /api/tasks/:name')?.startMs).toBeCloseTo(
        hrTimeToMilliseconds(serverTimes),
        2,
      );
      await provider.shutdown();
    },
  );

  it('gives up on a collector that is down without failing the flush or the shutdown', async () => {
    const exportThread = new SpanExportThread(
      configFor('http://127.0.0.1:9', 'http/json'),
      pino({ enabled: false }),
    );
    const provider = new TracerProvider({ spanProcessors: [exportThread] });
    provider.getTracer('corepool').startSpan('GET /health/live').end();
    await expect(provider.forceFlush()).resolves.toBeUndefined();
    await expect(provider.shutdown()).resolves.toBeUndefined();
    // The exporter retries a refused connection until its own timeout (10 s).
  }, 30_000);

  it('drops the spans past those the thread has not taken yet, and warns', async () => {
    const warnings: { dropped?: number; msg?: string }[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push(JSON.parse(line)) },
    );
    const exportThread = new SpanExportThread(configFor(receiver.url, 'http/json'), logger);
    const provider = new TracerProvider({ spanProcessors: [exportThread] });
    const tracer = provider.getTracer('corepool');
    // In one turn of the event loop the thread can take nothing: 2,048 are posted, the rest dropped.
    for (let i = 0; i < 2100; i++) tracer.startSpan(`span ${i}`).end();
    await provider.forceFlush();
    expect(receiver.spans).toHaveLength(2048);
    expect(warnings).toEqual([
      expect.objectContaining({
        dropped: 1,
        msg: expect.stringMatching(/export thread is behind/),
      }),
    ]);
    // Taken, the room comes back.
    tracer.startSpan('later').end();
    await provider.forceFlush();
    expect(receiver.spans.at(-1)?.name).toBe('later');
    await provider.shutdown();
  });

  it('drops the spans that end after its shutdown', async () => {
    const exportThread = new SpanExportThread(
      configFor(receiver.url, 'http/json'),
      pino({ enabled: false }),
    );
    const provider = new TracerProvider({ spanProcessors: [exportThread] });
    const tracer = provider.getTracer('corepool');
    tracer.startSpan('before').end();
    await exportThread.shutdown();
    tracer.startSpan('after').end();
    exportThread.addThreadSpans('ab'.repeat(16), []);
    await exportThread.forceFlush();
    expect(receiver.spans.map((span) => span.name)).toEqual(['before']);
  });
});
