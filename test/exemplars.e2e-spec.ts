import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';
import { waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

const randomTraceId = () => crypto.randomUUID().replaceAll('-', '');
/** A caller's W3C trace context; `sampled` sets its flags (the default sampler follows them). */
const traceparent = (traceId: string, sampled: boolean) =>
  `00-${traceId}-00f067aa0ba902b7-${sampled ? '01' : '00'}`;

/** What Prometheus sends (its default `scrape_protocols`). */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

interface Exemplar {
  readonly sample: string;
  readonly labels: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly value: number;
}

/** The exemplars of an OpenMetrics text: `sample{labels} value # {trace_id="…",span_id="…"} value timestamp`. */
function exemplarsIn(text: string): Exemplar[] {
  const found: Exemplar[] = [];
  for (const line of text.split('\n')) {
    const match =
      /^(\w+)\{(.*)\} \S+ # \{trace_id="([0-9a-f]{32})",span_id="([0-9a-f]{16})"\} (\S+) \S+$/.exec(
        line,
      );
    if (match !== null) {
      found.push({
        sample: match[1]!,
        labels: match[2]!,
        traceId: match[3]!,
        spanId: match[4]!,
        value: Number(match[5]),
      });
    }
  }
  return found;
}

async function scrape(service: ServiceProcess, accept: string) {
  // A fresh connection each: the cluster hands each scrape to the next process in turn.
  const response = await fetch(`${service.url}/metrics`, {
    headers: { accept, connection: 'close' },
  });
  expect(response.status).toBe(200);
  return { type: response.headers.get('content-type') ?? '', text: await response.text() };
}

describe.each([
  ['one process', '1'],
  ['the cluster (2 processes, aggregated by the primary)', '2'],
])('Exemplars on /metrics with tracing on: %s (real processes, real exporter)', (_, workers) => {
  let receiver: OtlpReceiver;
  let service: ServiceProcess;
  const sampled: string[] = [];
  const unsampled: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    service = await startService({
      CLUSTER_PROCESSES: workers,
      POOL_THREADS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      METRICS_CACHE_MS: '0',
    });
    // Each request on a new connection, so that in the cluster both processes serve some.
    for (let i = 0; i < 8; i++) {
      const isSampled = i % 2 === 0;
      const traceId = randomTraceId();
      (isSampled ? sampled : unsampled).push(traceId);
      const response = await fetch(`${service.url}/api/tasks/compute`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          connection: 'close',
          traceparent: traceparent(traceId, isSampled),
        },
        body: JSON.stringify({ iterations: 10 }),
      });
      expect(response.status).toBe(200);
    }
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('links the task and HTTP latency buckets to traces the exporter received, in OpenMetrics', async () => {
    const { type, text } = await scrape(service, PROMETHEUS_ACCEPT);
    expect(type).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    expect(text.endsWith('# EOF\n')).toBe(true);
    // OpenMetrics names a counter's family without `_total`, its sample with it.
    expect(text).toMatch(/^# TYPE compute_tasks counter$/m);
    expect(text).toMatch(/^compute_tasks_total\{task="compute",outcome="success"\} 8$/m);

    const exemplars = exemplarsIn(text);
    const onTasks = exemplars.filter(
      (exemplar) =>
        exemplar.sample === 'compute_task_run_seconds_bucket' &&
        exemplar.labels.includes('task="compute"'),
    );
    const onHttp = exemplars.filter(
      (exemplar) =>
        exemplar.sample === 'http_request_duration_seconds_bucket' &&
        exemplar.labels.includes('route="/api/tasks/:name"'),
    );
    expect(onTasks.length).toBeGreaterThan(0);
    expect(onHttp.length).toBeGreaterThan(0);
    for (const exemplar of [...onTasks, ...onHttp]) {
      // Only sampled requests leave exemplars, and each names a trace that was exported.
      expect(sampled).toContain(exemplar.traceId);
      await waitUntil(`the exporter to receive span ${exemplar.spanId}`, () =>
        receiver.spans.some(
          (span) => span.traceId === exemplar.traceId && span.spanId === exemplar.spanId,
        ),
      );
    }
    // The HTTP exemplar names the server span, the task's its scheduler span.
    const spanNamed = (exemplar: Exemplar) =>
      receiver.spans.find((span) => span.spanId === exemplar.spanId)?.name;
    expect(spanNamed(onHttp[0]!)).toBe('POST /api/tasks/:name');
    expect(spanNamed(onTasks[0]!)).toBe('schedule compute');
    for (const traceId of unsampled) expect(text).not.toContain(traceId);
  });

  it("keeps Prometheus's text format, without exemplars, for a scraper that asks for it", async () => {
    const { type, text } = await scrape(service, 'text/plain;version=0.0.4');
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).not.toContain('# {');
    expect(text).not.toContain('# EOF');
    expect(text).toMatch(/^compute_tasks_total\{task="compute",outcome="success"\} 8$/m);
  });
});

describe('Exemplars with tracing off (real process)', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1' });
  });
  afterAll(() => service?.stop());

  it('serves OpenMetrics without exemplars, even for a request that carries a sampled traceparent', async () => {
    const response = await fetch(`${service.url}/api/tasks/compute`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: traceparent(randomTraceId(), true),
      },
      body: JSON.stringify({ iterations: 10 }),
    });
    expect(response.status).toBe(200);
    const { type, text } = await scrape(service, PROMETHEUS_ACCEPT);
    expect(type).toMatch(/^application\/openmetrics-text/);
    expect(text).toMatch(/^compute_task_run_seconds_bucket\{.*task="compute"\} 1$/m);
    expect(text).not.toContain('# {');
  });
});
