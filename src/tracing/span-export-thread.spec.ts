import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import pino from 'pino';
import { startOtlpReceiver, type OtlpReceiver } from '../../test/support/otlp-receiver';
import { testConfig } from '../../test/support/test-config';
import type { AppConfig } from '../config/app-config';
import { threadPrioritySupported } from '@corepool/core/host';
import type { ThreadSpanRecord } from '@corepool/core/host';
import type { TracingConfig } from './otlp-export';
import { SpanExportThread } from './span-export-thread';

type Protocol = AppConfig['tracing']['protocol'];

const configFor = (
  endpoint: string,
  protocol: Protocol,
  env: Record<string, string> = {},
): TracingConfig => ({
  ...testConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: 'corepool-test',
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    ...env,
  }).tracing,
  instanceId: 'instance-1',
});

/** The nice value of each thread of this process named as the export thread (Linux keeps the name). */
function exportThreadNices(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    if (!'corepool span export'.startsWith(name)) return [];
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // After the name in parentheses: state is field 3, nice field 19.
    return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
  });
}

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
        resource: {
          'process.pid': process.pid,
          'deployment.environment.name': 'test',
          'service.instance.id': 'instance-1',
          'telemetry.sdk.name': 'opentelemetry',
          'telemetry.sdk.language': 'nodejs',
          'host.name': expect.any(String),
          'process.runtime.name': 'nodejs',
        },
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

  it('gives up on a collector that is down without failing the flush or the shutdown, and counts and warns', async () => {
    const lines: { level: number; msg: string; component?: string }[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    const exportThread = new SpanExportThread(
      // A refused connection is retried until the export's timeout.
      configFor('http://127.0.0.1:9', 'http/json', { OTEL_EXPORTER_OTLP_TIMEOUT: '500' }),
      logger,
    );
    const provider = new TracerProvider({ spanProcessors: [exportThread] });
    const tracer = provider.getTracer('corepool');
    for (const name of ['GET /health/live', 'GET /health/ready']) tracer.startSpan(name).end();
    await expect(provider.forceFlush()).resolves.toBeUndefined();
    expect(exportThread.stats()).toEqual({
      exportFailures: 1,
      spansDropped: { export_failed: 2, queue_full: 0 },
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        component: 'opentelemetry',
        msg: expect.stringMatching(/^Span export failed \(.+\): 1 export\(s\), 2 span\(s\) lost/),
      }),
    );
    // Throttled: a second failure within the minute is counted, not logged.
    tracer.startSpan('GET /metrics').end();
    await provider.forceFlush();
    expect(exportThread.stats().exportFailures).toBe(2);
    expect(lines.filter((line) => /Span export failed/.test(line.msg))).toHaveLength(1);
    await expect(provider.shutdown()).resolves.toBeUndefined();
  }, 30_000);

  it('says nothing of a failed export with OTEL_LOG_LEVEL=error, and still counts it', async () => {
    const lines: unknown[] = [];
    const exportThread = new SpanExportThread(
      configFor('http://127.0.0.1:9', 'http/json', {
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
        OTEL_LOG_LEVEL: 'ERROR',
      }),
      pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
    );
    const provider = new TracerProvider({ spanProcessors: [exportThread] });
    provider.getTracer('corepool').startSpan('GET /health/live').end();
    await provider.forceFlush();
    expect(exportThread.stats().exportFailures).toBe(1);
    expect(lines).toEqual([]);
    await provider.shutdown();
  }, 30_000);

  it.each([
    ['7', 7],
    ['0', 0],
  ])(
    'runs the export thread at WORKER_NICE_INCREMENT=%s above the event loop',
    async (increment, added) => {
      const exportThread = new SpanExportThread(
        configFor(receiver.url, 'http/json', { WORKER_NICE_INCREMENT: increment }),
        pino({ enabled: false }),
      );
      const provider = new TracerProvider({ spanProcessors: [exportThread] });
      provider.getTracer('corepool').startSpan('GET /health/live').end();
      // Answered once the thread has run its start, priority included.
      await provider.forceFlush();
      const base = getPriority();
      const expected = threadPrioritySupported ? Math.min(19, base + added) : base;
      if (threadPrioritySupported) expect(exportThreadNices()).toEqual([expected]);
      await provider.shutdown();
    },
  );

  it('drops the spans past those the thread has not taken yet, counts them, and warns', async () => {
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
    expect(exportThread.stats().spansDropped).toEqual({
      export_failed: 0,
      queue_full: 2100 - 2048,
    });
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
