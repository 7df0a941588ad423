import { request } from 'node:http';
import { startApp, postJson } from './support/http-app';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { waitUntil } from './support/poll';
import { freePort, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(60_000);

/** A caller's W3C trace context: the service continues this trace. */
const traceparent = (traceId: string, spanId = '00f067aa0ba902b7') => `00-${traceId}-${spanId}-01`;
const randomTraceId = () => crypto.randomUUID().replaceAll('-', '');

const spansOf = (receiver: OtlpReceiver, traceId: string) =>
  receiver.spans.filter((span) => span.traceId === traceId);

/** Waits until the trace holds a span named `name`, and returns it. */
async function spanNamed(receiver: OtlpReceiver, traceId: string, name: string) {
  await waitUntil(`span '${name}' of trace ${traceId}`, () =>
    spansOf(receiver, traceId).some((span) => span.name === name),
  );
  return spansOf(receiver, traceId).find((span) => span.name === name) as ReceivedSpan;
}

// A real process: the OTLP exporters load `node:http` by a dynamic import, which Jest's
// module sandbox refuses (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG) in an in-process app.
/** The built service exporting to a receiver of this test, both stopped after the block. */
function tracedService(protocol: string, env: Record<string, string>) {
  const started = {
    receiver: undefined as unknown as OtlpReceiver,
    service: undefined as unknown as ServiceProcess,
  };
  beforeAll(async () => {
    started.receiver = await startOtlpReceiver();
    started.service = await startService({
      CLUSTER_PROCESSES: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: started.receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    });
  });
  afterAll(async () => {
    await started.service?.stop();
    await started.receiver?.close();
  });
  return started;
}

describe('Tracing with OTLP over http/json (real process, real threads)', () => {
  const started = tracedService('http/json', {
    POOL_THREADS: '2',
    OTEL_SERVICE_NAME: 'corepool-under-test',
  });
  let receiver: OtlpReceiver;
  let running: ServiceProcess;
  beforeAll(() => {
    ({ receiver, service: running } = started);
  });

  it('continues the caller trace: server → scheduler → run span made on the thread', async () => {
    const traceId = randomTraceId();
    const response = await postJson(
      `${running.url}/api/tasks/compute`,
      { iterations: 10 },
      { traceparent: traceparent(traceId) },
    );
    expect(response.status).toBe(200);

    const server = await spanNamed(receiver, traceId, 'POST /api/tasks/:name');
    const scheduler = await spanNamed(receiver, traceId, 'schedule compute');
    const run = await spanNamed(receiver, traceId, 'run compute');
    expect(server.parentSpanId).toBe('00f067aa0ba902b7');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/tasks/:name',
      'http.response.status_code': 200,
    });
    expect(server.serviceName).toBe('corepool-under-test');
    expect(scheduler.parentSpanId).toBe(server.spanId);
    expect(scheduler.attributes).toMatchObject({
      'corepool.task.name': 'compute',
      'corepool.scheduler.decision': 'admitted',
    });
    expect(run.parentSpanId).toBe(scheduler.spanId);
    expect(run.attributes).toMatchObject({
      'corepool.task.name': 'compute',
      'corepool.task.outcome': 'success',
      'corepool.task.input_size': expect.any(Number),
    });
    // Made on a worker thread: the main thread's id is 0.
    expect(run.attributes['thread.id']).toEqual(expect.any(Number));
    expect(run.attributes['thread.id']).not.toBe(0);
    expect(run.statusCode).not.toBe(2);
  });

  it('ends a timed-out task span with an error status and its code, and the problem names the trace', async () => {
    const traceId = randomTraceId();
    const response = await postJson(
      `${running.url}/api/tasks/cooperative-spin`,
      {},
      { traceparent: traceparent(traceId), 'x-request-timeout-ms': '200' },
    );
    expect(response.status).toBe(504);
    const problem = (await response.json()) as { code: string; traceId?: string };
    expect(problem).toMatchObject({ code: 'TASK_TIMEOUT', traceId });

    const run = await spanNamed(receiver, traceId, 'run cooperative-spin');
    expect(run.statusCode).toBe(2);
    expect(run.attributes).toMatchObject({
      'error.type': 'TASK_TIMEOUT',
      'corepool.error.code': 'TASK_TIMEOUT',
      'corepool.task.outcome': 'cancelled',
    });
    const server = await spanNamed(receiver, traceId, 'POST /api/tasks/:name');
    expect(server.statusCode).toBe(2);
    expect(server.attributes['http.response.status_code']).toBe(504);
  });

  it('gives routes that run no task a server span too', async () => {
    const traceId = randomTraceId();
    const response = await fetch(`${running.url}/health/live`, {
      headers: { traceparent: traceparent(traceId) },
    });
    expect(response.status).toBe(200);
    const server = await spanNamed(receiver, traceId, 'GET /health/live');
    expect(server.attributes['http.response.status_code']).toBe(200);
  });

  it('ends the server span of a request whose client left first with 499 CLIENT_CLOSED_REQUEST', async () => {
    const traceId = randomTraceId();
    const body = JSON.stringify({ ms: 5_000 });
    const leaving = request(`${running.url}/api/tasks/sleep`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        traceparent: traceparent(traceId),
      },
    });
    leaving.on('error', () => undefined);
    leaving.end(body);
    // The task runs on a thread once the service has the whole request: then the client leaves.
    await waitUntil('the sleep task to run', async () => {
      const text = await (await fetch(`${running.url}/metrics`)).text();
      return /^compute_pool_utilization(\{[^}]*\})? (0\.[1-9]|1)/m.test(text);
    });
    leaving.destroy();
    const server = await spanNamed(receiver, traceId, 'POST /api/tasks/:name');
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 499,
      'corepool.error.code': 'CLIENT_CLOSED_REQUEST',
    });
  });

  it('starts a new trace for a request without a traceparent', async () => {
    const response = await postJson(`${running.url}/api/tasks/compute`, { iterations: 3 });
    expect(response.status).toBe(200);
    await waitUntil('a root server span', () =>
      receiver.spans.some(
        (span) => span.name === 'POST /api/tasks/:name' && span.parentSpanId === '',
      ),
    );
  });
});

describe('Tracing with OTLP over http/protobuf (real process, JSON logs)', () => {
  const started = tracedService('http/protobuf', { POOL_THREADS: '1', LOG_LEVEL: 'info' });
  let receiver: OtlpReceiver;
  let service: ServiceProcess;
  beforeAll(() => {
    ({ receiver, service } = started);
  });

  it('exports the request trace and writes its ids on the access line', async () => {
    const traceId = randomTraceId();
    const response = await fetch(`${service.url}/api/tasks/compute`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'traced-1',
        traceparent: traceparent(traceId),
      },
      body: '{"iterations":10}',
    });
    expect(response.status).toBe(200);
    const run = await spanNamed(receiver, traceId, 'run compute');
    const server = await spanNamed(receiver, traceId, 'POST /api/tasks/:name');
    expect(run.attributes['thread.id']).not.toBe(0);
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((type) => type.startsWith('application/x-protobuf'))).toBe(true);

    const line = await service.waitForLine(/"reqId":"traced-1".*"request completed"/);
    expect(JSON.parse(line)).toMatchObject({ trace_id: traceId, span_id: server.spanId });
  });
});

describe('Tracing with a collector that is down (gRPC)', () => {
  it('answers requests and still exits cleanly on SIGTERM', async () => {
    // A port nobody listens on: every export fails. Over gRPC the exporter's failure
    // reaches the SDK's shutdown, which the app's close then must not pass on.
    const service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      // The spans are still buffered at SIGTERM: the close's export is the one that fails.
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    try {
      const response = await postJson(`${service.url}/api/tasks/compute`, { iterations: 3 });
      expect(response.status).toBe(200);
      await service.shutdown();
      expect(await service.exited).toEqual({ code: 0, signal: null });
    } finally {
      await service.stop();
    }
  });
});

// In-process is enough here: with tracing off no exporter is ever made.
describe('Tracing off', () => {
  it.each([
    ['OTEL_SDK_DISABLED=true with an endpoint', { OTEL_SDK_DISABLED: 'true' }],
    // OpenTelemetry's booleans are read in any case.
    ['OTEL_SDK_DISABLED=TRUE with an endpoint', { OTEL_SDK_DISABLED: 'TRUE' }],
    ['OTEL_TRACES_EXPORTER=none with an endpoint', { OTEL_TRACES_EXPORTER: 'none' }],
    ['no endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: '' }],
  ])('%s: requests succeed and nothing is exported', async (_case, env) => {
    const receiver = await startOtlpReceiver();
    const running = await startApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    });
    try {
      const traceId = randomTraceId();
      const response = await postJson(
        `${running.url}/api/tasks/cooperative-spin`,
        {},
        { traceparent: traceparent(traceId), 'x-request-timeout-ms': '100' },
      );
      expect(response.status).toBe(504);
      expect(await response.json()).not.toHaveProperty('traceId');
    } finally {
      // Closing flushes any SDK there is: whatever it held would arrive before this resolves.
      await running.close();
      await receiver.close();
    }
    expect(receiver.requests).toEqual([]);
  });
});
