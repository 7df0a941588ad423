import { startApp } from './support/http-app';
import { REDIS_URL, uniquePrefix, waitForJob, type Json } from './support/jobs-client';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { waitUntil } from './support/poll';
import { freshJobsPath, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(180_000);

const CALLER_SPAN = '00f067aa0ba902b7';
const randomTraceId = () => crypto.randomUUID().replaceAll('-', '');
/** A caller's W3C trace context; flags 00: the caller did not sample it. */
const traceparent = (traceId: string, flags = '01') => `00-${traceId}-${CALLER_SPAN}-${flags}`;

/** POST /api/jobs with the caller's trace context; the job's id. */
async function submitTraced(url: string, task: string, input: object, header: string) {
  const response = await fetch(`${url}/api/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: header },
    body: JSON.stringify({ task, input }),
  });
  const body = (await response.json()) as Json;
  if (response.status !== 202) throw new Error(`submit ${task}: ${JSON.stringify(body)}`);
  return body.id as string;
}

/** OTLP's span kinds (`Span.SpanKind`). */
const SPAN_KIND_PRODUCER = 4;
const SPAN_KIND_CONSUMER = 5;

/** The spans of one trace, read as the receiver gets them. */
function traceOf(receiver: OtlpReceiver, traceId: string) {
  const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
  const named = (name: string) => spans().filter((span) => span.name === name);
  return {
    /** Waits until `count` spans named `name` arrived; returns them. */
    async all(name: string, count = 1): Promise<ReceivedSpan[]> {
      await waitUntil(`${count} span(s) '${name}' of trace ${traceId}`, () => {
        return named(name).length >= count;
      });
      return named(name);
    },
    async one(name: string): Promise<ReceivedSpan> {
      return (await this.all(name))[0] as ReceivedSpan;
    },
  };
}

/** Each backend, and the `messaging.system` its job spans name. */
const backends: Array<[string, () => Record<string, string>, string]> = [
  ['SQLite store', () => ({ JOBS_SQLITE_PATH: freshJobsPath() }), 'corepool'],
  ['BullMQ on Redis', () => ({ REDIS_URL, JOBS_QUEUE_PREFIX: uniquePrefix() }), 'bullmq'],
];

// Real processes: the OTLP exporters load `node:http` by a dynamic import, which Jest's module
// sandbox refuses in an in-process app (test/tracing.e2e-spec.ts).
describe.each(backends)(
  'Jobs keep the submitter trace on the %s (real processes, OTLP)',
  (_name, backendEnv, system) => {
    let receiver: OtlpReceiver;
    const services: ServiceProcess[] = [];
    const traced = async (env: Record<string, string>) => {
      const service = await startService({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        POOL_THREADS: '1',
        LOG_LEVEL: 'warn',
        ...env,
      });
      services.push(service);
      return service;
    };

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
    });
    afterAll(async () => {
      await Promise.all(services.map((service) => service.stop()));
      await receiver?.close();
    });

    describe('in cluster mode (2 processes)', () => {
      let cluster: ServiceProcess;
      beforeAll(async () => {
        cluster = await traced({
          ...backendEnv(),
          CLUSTER_PROCESSES: '2',
          JOBS_ATTEMPTS: '2',
          JOBS_BACKOFF_MS: '100',
        });
      });

      it('runs the job as a child of its submit span: server → submit → process → schedule → run', async () => {
        const traceId = randomTraceId();
        const id = await submitTraced(cluster.url, 'factorial', { n: 20 }, traceparent(traceId));
        const job = await waitForJob(cluster.url, id);
        expect(job).toMatchObject({ status: 'succeeded', attempts: 1, traceId });

        const trace = traceOf(receiver, traceId);
        const server = await trace.one('POST /api/jobs');
        const submit = await trace.one('submit jobs');
        const process = await trace.one('process jobs');
        const schedule = await trace.one('schedule factorial');
        const run = await trace.one('run factorial');
        expect(server.parentSpanId).toBe(CALLER_SPAN);
        expect(submit.parentSpanId).toBe(server.spanId);
        // OpenTelemetry's messaging conventions: the job is a message on the queue `jobs`.
        expect(submit.kind).toBe(SPAN_KIND_PRODUCER);
        expect(submit.attributes).toMatchObject({
          'messaging.system': system,
          'messaging.operation.name': 'submit',
          'messaging.operation.type': 'send',
          'messaging.destination.name': 'jobs',
          'messaging.message.id': id,
          'corepool.task.name': 'factorial',
          'corepool.job.id': id,
          'corepool.job.created': true,
        });
        expect(process.parentSpanId).toBe(submit.spanId);
        expect(process.kind).toBe(SPAN_KIND_CONSUMER);
        expect(process.attributes).toMatchObject({
          'messaging.system': system,
          'messaging.operation.name': 'process',
          'messaging.operation.type': 'process',
          'messaging.destination.name': 'jobs',
          'messaging.message.id': id,
          'corepool.task.name': 'factorial',
          'corepool.job.id': id,
          'corepool.job.attempt': 1,
          'corepool.job.outcome': 'succeeded',
        });
        expect(process.statusCode).not.toBe(2);
        expect(schedule.parentSpanId).toBe(process.spanId);
        expect(run.parentSpanId).toBe(schedule.spanId);
        expect(run.attributes['thread.id']).not.toBe(0);
        // The run span's process is the one that ran the job; the submission's may be the other.
        const runner = (job.result as Json).runner as Json;
        expect(process.resource['process.pid']).toBe(runner.pid);
        expect(run.resource['process.pid']).toBe(runner.pid);
        expect(submit.resource['process.pid']).toBe(server.resource['process.pid']);
      });

      it('keeps the trace through a retry: each run is a child of the one submit span', async () => {
        const traceId = randomTraceId();
        const id = await submitTraced(cluster.url, 'crash', {}, traceparent(traceId));
        const job = await waitForJob(cluster.url, id);
        expect(job).toMatchObject({ status: 'failed', attempts: 2, traceId });

        const trace = traceOf(receiver, traceId);
        const submit = await trace.one('submit jobs');
        const runs = await trace.all('process jobs', 2);
        const byAttempt = runs.sort(
          (a, b) =>
            (a.attributes['corepool.job.attempt'] as number) -
            (b.attributes['corepool.job.attempt'] as number),
        );
        expect(byAttempt.map((span) => span.attributes)).toEqual([
          expect.objectContaining({
            'corepool.job.attempt': 1,
            'corepool.job.outcome': 'retry',
            'corepool.error.code': 'WORKER_CRASHED',
          }),
          expect.objectContaining({
            'corepool.job.attempt': 2,
            'corepool.job.outcome': 'failed',
            'corepool.error.code': 'WORKER_CRASHED',
          }),
        ]);
        for (const span of byAttempt) {
          expect(span.parentSpanId).toBe(submit.spanId);
          expect(span.statusCode).toBe(2);
        }
      });

      it('stores no context for a submission the caller did not sample: its view has no traceId', async () => {
        const traceId = randomTraceId();
        const id = await submitTraced(
          cluster.url,
          'factorial',
          { n: 5 },
          traceparent(traceId, '00'),
        );
        const job = await waitForJob(cluster.url, id);
        expect(job.status).toBe('succeeded');
        expect(job).not.toHaveProperty('traceId');
      });
    });

    it('keeps the trace when the job is taken over after its process was killed (kill -9)', async () => {
      const env = {
        ...backendEnv(),
        CLUSTER_PROCESSES: '1',
        // Short leases, so that the killed process's job is taken over within seconds.
        JOBS_LOCK_DURATION_MS: '2000',
        JOBS_POLL_INTERVAL_MS: '100',
      };
      // Only `a` runs when the job is submitted, so the job is certainly on it.
      const a = await traced(env);
      const traceId = randomTraceId();
      const id = await submitTraced(a.url, 'which-process', { ms: 4000 }, traceparent(traceId));
      await waitForJob(a.url, id, (job) => job.status === 'running');
      const trace = traceOf(receiver, traceId);
      // Exported before the kill: the submit span is ended when the submission is answered.
      const submit = await trace.one('submit jobs');
      a.child.kill('SIGKILL');
      await a.exited;

      const b = await traced(env);
      const job = await waitForJob(b.url, id, undefined, 90_000);
      expect(job).toMatchObject({ status: 'succeeded', attempts: 2, traceId });
      expect((job.result as Json).value.pid).toBe(b.pid);
      // The first run died with `a`: its span was never ended, so never exported.
      const [takeover] = await trace.all('process jobs');
      expect(takeover?.attributes).toMatchObject({
        'corepool.job.id': id,
        'corepool.job.attempt': 2,
        'corepool.job.outcome': 'succeeded',
      });
      expect(takeover?.parentSpanId).toBe(submit.spanId);
      expect(submit.resource['process.pid']).toBe(a.pid);
      expect(takeover?.resource['process.pid']).toBe(b.pid);
      const run = await trace.one('run which-process');
      expect(run.resource['process.pid']).toBe(b.pid);
    });
  },
);

// In-process is enough here: with tracing off no exporter is ever made.
describe('Jobs with tracing off', () => {
  it('store no trace context and show no traceId, whatever traceparent the caller sent', async () => {
    const receiver = await startOtlpReceiver();
    const running = await startApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SDK_DISABLED: 'true',
      POOL_THREADS: '1',
    });
    try {
      const id = await submitTraced(
        running.url,
        'factorial',
        { n: 5 },
        traceparent(randomTraceId()),
      );
      const job = await waitForJob(running.url, id);
      expect(job.status).toBe('succeeded');
      expect(job).not.toHaveProperty('traceId');
    } finally {
      await running.close();
      await receiver.close();
    }
    expect(receiver.requests).toEqual([]);
  });
});
