import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { postJson } from './support/http-app';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { waitUntil } from './support/poll';
import { launchProcess, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(60_000);

/**
 * OpenTelemetry as its specification says, each rule against the real exporter of the
 * built service and a real OTLP/HTTP receiver (docs/observability.md, ADR 0055).
 */

const traceparent = (traceId: string, flags = '01') => `00-${traceId}-00f067aa0ba902b7-${flags}`;
const randomTraceId = () => crypto.randomUUID().replaceAll('-', '');

async function spanOf(
  receiver: OtlpReceiver,
  traceId: string,
  name: string,
): Promise<ReceivedSpan> {
  const find = () => receiver.spans.find((span) => span.traceId === traceId && span.name === name);
  await waitUntil(`span '${name}' of trace ${traceId}`, () => find() !== undefined);
  return find() as ReceivedSpan;
}

/** A counter's value in a (cluster-wide) scrape, summed over its series that match `labels`. */
async function counter(service: ServiceProcess, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const pattern = new RegExp(`^${name}(\\{[^}]*${labels}[^}]*\\})? (\\S+)$`, 'gm');
  return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[2]), 0);
}

describe('The exporter variables, with the specification’s precedence (2 processes)', () => {
  let traces: OtlpReceiver;
  let generic: OtlpReceiver;
  let service: ServiceProcess;
  beforeAll(async () => {
    traces = await startOtlpReceiver({ path: '/custom/traces' });
    generic = await startOtlpReceiver();
    service = await startService({
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      // The traces variables win: this endpoint as written, this protocol.
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${traces.url}/custom/traces`,
      OTEL_EXPORTER_OTLP_ENDPOINT: generic.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=generic,x-shared=generic',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-shared=traces%20only',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes,deployment.environment.name=e2e',
      // Not `true`: read as false, with a warning, and the service starts.
      OTEL_SDK_DISABLED: '1',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await traces?.close();
    await generic?.close();
  });

  it('sends to the traces endpoint as written, in the traces protocol, with the merged headers, gzipped', async () => {
    const traceId = randomTraceId();
    expect(
      (
        await postJson(
          `${service.url}/api/tasks/compute`,
          { iterations: 3 },
          { traceparent: traceparent(traceId) },
        )
      ).status,
    ).toBe(200);
    await spanOf(traces, traceId, 'POST /api/tasks/:name');
    expect(traces.received[0]).toMatchObject({
      path: '/custom/traces',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'x-team': 'generic',
        'x-shared': 'traces only',
      },
    });
    expect(generic.received).toEqual([]);
  });

  it('warns of an OTEL_SDK_DISABLED that is neither true nor false, and reads it as false', async () => {
    await service.waitForLine(/OTEL_SDK_DISABLED=1 is neither true nor false: read as false/);
  });

  it('names the service from OTEL_RESOURCE_ATTRIBUTES, with a service.instance.id per process and the SDK, host and process resource', async () => {
    const ids = new Map<number, string>();
    // Each connection goes to one process: new connections until both have traced a request.
    await waitUntil('a span from each process', async () => {
      const traceId = randomTraceId();
      await fetch(`${service.url}/health/live`, {
        headers: { traceparent: traceparent(traceId), connection: 'close' },
      });
      const span = await spanOf(traces, traceId, 'GET /health/live');
      ids.set(Number(span.resource['process.pid']), String(span.resource['service.instance.id']));
      return ids.size === 2;
    });
    const span = traces.spans[0] as ReceivedSpan;
    expect(span.serviceName).toBe('from-attributes');
    expect(span.resource).toMatchObject({
      'deployment.environment.name': 'e2e',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.version': expect.any(String),
      'host.name': expect.any(String),
      'host.arch': expect.any(String),
      'process.runtime.name': 'nodejs',
      'process.executable.path': expect.any(String),
    });
    const [first, second] = [...ids.values()];
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toMatch(/^[0-9a-f-]{36}$/);
    expect(first).not.toBe(second);
  });

  it('gives the server span the required and recommended HTTP attributes', async () => {
    const traceId = randomTraceId();
    const response = await fetch(`${service.url}/api/tasks/compute?mode=fast&sig=secret`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'corepool-e2e/1.0',
        traceparent: traceparent(traceId),
      },
      body: '{"iterations":3}',
    });
    expect(response.status).toBeLessThan(500);
    const server = await spanOf(traces, traceId, 'POST /api/tasks/:name');
    expect(server.kind).toBe(2);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/tasks/:name',
      'http.response.status_code': response.status,
      'url.scheme': 'http',
      'url.path': '/api/tasks/compute',
      'url.query': 'mode=fast&sig=REDACTED',
      'server.address': '127.0.0.1',
      'server.port': service.port,
      'client.address': '127.0.0.1',
      'network.peer.address': '127.0.0.1',
      'network.peer.port': expect.any(Number),
      'network.protocol.version': '1.1',
      'user_agent.original': 'corepool-e2e/1.0',
    });
  });
});

describe('The generic endpoint, OTEL_SERVICE_NAME and OTEL_PROPAGATORS=baggage (1 process)', () => {
  let receiver: OtlpReceiver;
  let service: ServiceProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver({ path: '/base/v1/traces' });
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      // A base with a path: /v1/traces is appended to it.
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/base/`,
      OTEL_SERVICE_NAME: 'from-service-name',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes',
      OTEL_PROPAGATORS: 'baggage',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('appends /v1/traces to the generic endpoint, names the service from OTEL_SERVICE_NAME, and reads no traceparent', async () => {
    const callerTrace = randomTraceId();
    const response = await fetch(`${service.url}/health/live`, {
      headers: { traceparent: traceparent(callerTrace), baggage: 'tenant=a' },
    });
    expect(response.status).toBe(200);
    await waitUntil('a server span', () =>
      receiver.spans.some((span) => span.name === 'GET /health/live'),
    );
    const span = receiver.spans.find((each) => each.name === 'GET /health/live') as ReceivedSpan;
    expect(receiver.received[0]?.path).toBe('/base/v1/traces');
    expect(span.serviceName).toBe('from-service-name');
    // Only baggage is read: the caller's trace is not continued.
    expect(span.traceId).not.toBe(callerTrace);
    expect(span.parentSpanId).toBe('');
  });
});

describe('The trace cap (callers that force sampling)', () => {
  let receiver: OtlpReceiver;
  let service: ServiceProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      // 0 rather than 0.01: a scrape (no traceparent) then never takes a trace's room.
      OTEL_TRACES_SAMPLER_ARG: '0',
      TRACING_MAX_TRACES_PER_SECOND: '5',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('traces no more than the cap allows of requests that all ask to be sampled, and counts the rest', async () => {
    const requests = 200;
    const started = performance.now();
    for (let i = 0; i < requests; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${service.url}/health/live`, {
            headers: { traceparent: traceparent(randomTraceId()) },
          }),
        ),
      );
    }
    const seconds = (performance.now() - started) / 1000;
    await waitUntil(
      'the capped traces counted',
      async () => (await counter(service, 'compute_tracing_traces_capped_total')) > 0,
    );
    // Every request was answered before the scrape, and its span ended with its answer.
    const capped = await counter(service, 'compute_tracing_traces_capped_total');
    await waitUntil(
      'the traced requests exported',
      () =>
        receiver.spans.filter((span) => span.name === 'GET /health/live').length + capped >=
        requests,
    );
    const traced = receiver.spans.filter((span) => span.name === 'GET /health/live').length;
    expect(traced + capped).toBe(requests);
    // A second's worth at once, then 5 a second: the bound is what the bucket held plus what the
    // time taken refilled (the time is measured, not asserted).
    expect(traced).toBeGreaterThanOrEqual(5);
    expect(traced).toBeLessThanOrEqual(5 + Math.ceil(5 * seconds) + 1);
  });
});

describe('A collector that is a blackhole (2 processes)', () => {
  let receiver: OtlpReceiver;
  let service: ServiceProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver({ behaviour: 'silent' });
    service = await startService({
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('counts the failed exports and their spans in the cluster scrape, and warns once', async () => {
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${service.url}/health/live`, {
        headers: { traceparent: traceparent(randomTraceId()), connection: 'close' },
      });
      expect(response.status).toBe(200);
    }
    await waitUntil(
      'export failures in the scrape',
      async () => (await counter(service, 'compute_tracing_export_failures_total')) > 0,
    );
    await waitUntil(
      'dropped spans in the scrape',
      async () =>
        (await counter(service, 'compute_tracing_spans_dropped_total', 'reason="export_failed"')) >
        0,
    );
    expect(receiver.received.length).toBeGreaterThan(0);
    const line = await service.waitForLine(/Span export failed/);
    expect(JSON.parse(line)).toMatchObject({ level: 40, component: 'opentelemetry' });
  });
});

describe('The gRPC exporter, an optional dependency', () => {
  let dir: string;
  beforeAll(() => {
    // The built service with every installed package but the gRPC exporter, as the image has it.
    const root = resolve(__dirname, '..');
    dir = mkdtempSync(join(tmpdir(), 'corepool-no-grpc-'));
    cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    const modules = join(root, 'node_modules');
    mkdirSync(join(dir, 'node_modules', '@opentelemetry'), { recursive: true });
    for (const name of readdirSync(modules)) {
      if (name === '@opentelemetry') continue;
      symlinkSync(join(modules, name), join(dir, 'node_modules', name));
    }
    for (const name of readdirSync(join(modules, '@opentelemetry'))) {
      if (name === 'exporter-trace-otlp-grpc') continue;
      symlinkSync(
        join(modules, '@opentelemetry', name),
        join(dir, 'node_modules', '@opentelemetry', name),
      );
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops the start with one line and its code when grpc is chosen and the package is absent', async () => {
    const service = await launchProcess({
      cwd: dir,
      readyPath: null,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        CLUSTER_PROCESSES: '2',
      },
    });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.lines.filter((line) => line !== '')).toEqual([
      expect.stringMatching(
        /^OTLP_GRPC_EXPORTER_MISSING: .*@opentelemetry\/exporter-trace-otlp-grpc.*not installed/,
      ),
    ]);
  });

  it('starts without it when the protocol is HTTP', async () => {
    const receiver = await startOtlpReceiver();
    const service = await launchProcess({
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, CLUSTER_PROCESSES: '1', POOL_THREADS: '1' },
    });
    try {
      expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
    } finally {
      await service.stop();
      await receiver.close();
    }
  });
});
