import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, SamplingDecision } from '@opentelemetry/sdk-trace';
import pino from 'pino';
import { testConfig } from '../../test/support/test-config';
import type { AppConfig } from '../config/app-config';
import { OtelTracing } from './otel-tracing';
import { CappedSampler, TraceCap } from './sampling';

type Sampler = AppConfig['tracing']['sampler'];

const SAMPLED_PARENT = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
const UNSAMPLED_PARENT = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-00`;

describe('sampling a request span', () => {
  const tracings: OtelTracing[] = [];
  afterAll(() => Promise.all(tracings.map((tracing) => tracing.shutdown())));

  /** How many of `count` requests with these headers get a recording span. */
  function recorded(
    sampler: Sampler,
    ratio: number,
    headers: Record<string, string>,
    count = 1,
    env: Record<string, string> = {},
  ) {
    const tracing = tracingWith({
      OTEL_TRACES_SAMPLER: sampler,
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
      // Above every count here: the cap has its own tests below.
      TRACING_MAX_TRACES_PER_SECOND: '100000',
      ...env,
    });
    let recording = 0;
    for (let i = 0; i < count; i++) {
      if (tracing.startRequest('GET', '/x', headers).isRecording()) recording++;
    }
    return recording;
  }

  function tracingWith(env: Record<string, string>): OtelTracing {
    // Nothing is exported: no span is ended.
    const config = testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...env });
    const tracing = new OtelTracing(
      { ...config.tracing, instanceId: 'test' },
      pino({ enabled: false }),
    );
    tracings.push(tracing);
    return tracing;
  }

  it('keeps the configured share of the traces that start here, decided before the SDK', () => {
    // 2,000 draws at 10 %: 200 expected, 13 one standard deviation.
    expect(recorded('parentbased_traceidratio', 0.1, {}, 2000)).toBeGreaterThan(120);
    expect(recorded('parentbased_traceidratio', 0.1, {}, 2000)).toBeLessThan(280);
    expect(recorded('parentbased_traceidratio', 0, {}, 200)).toBe(0);
    expect(recorded('parentbased_traceidratio', 1, {}, 200)).toBe(200);
  });

  it("follows a valid traceparent's decision, and takes an invalid one for a new trace", () => {
    expect(recorded('parentbased_traceidratio', 0, { traceparent: SAMPLED_PARENT }, 50)).toBe(50);
    expect(recorded('parentbased_traceidratio', 1, { traceparent: UNSAMPLED_PARENT }, 50)).toBe(0);
    expect(recorded('parentbased_traceidratio', 0, { traceparent: 'not-a-parent' }, 50)).toBe(0);
    expect(recorded('parentbased_traceidratio', 1, { traceparent: 'not-a-parent' }, 50)).toBe(50);
  });

  it('keeps what each other sampler keeps', () => {
    expect(recorded('parentbased_always_off', 1, {}, 50)).toBe(0);
    expect(recorded('parentbased_always_off', 1, { traceparent: SAMPLED_PARENT }, 50)).toBe(50);
    expect(recorded('parentbased_always_on', 0, {}, 50)).toBe(50);
    expect(recorded('parentbased_always_on', 0, { traceparent: UNSAMPLED_PARENT }, 50)).toBe(0);
    expect(recorded('always_off', 1, { traceparent: SAMPLED_PARENT }, 50)).toBe(0);
    expect(recorded('always_on', 0, { traceparent: UNSAMPLED_PARENT }, 50)).toBe(50);
    // By the trace id: the same id, the same decision, whatever the parent decided.
    expect([0, 50]).toContain(recorded('traceidratio', 0.5, { traceparent: SAMPLED_PARENT }, 50));
    expect(recorded('traceidratio', 1, { traceparent: UNSAMPLED_PARENT }, 50)).toBe(50);
  });

  it('keeps no more traces than the cap, whatever the callers flag, and counts the rest', () => {
    const tracing = tracingWith({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
      TRACING_MAX_TRACES_PER_SECOND: '5',
    });
    let recording = 0;
    for (let i = 0; i < 100; i++) {
      if (tracing.startRequest('GET', '/x', { traceparent: SAMPLED_PARENT }).isRecording()) {
        recording++;
      }
    }
    // One second's worth at once: 5, and what the loop's own time refilled (far below one).
    expect(recording).toBe(5);
    expect(tracing.stats().tracesCapped).toBe(95);
    // What the sampler would not have kept anyway is not counted as capped.
    tracing.startRequest('GET', '/x', { traceparent: UNSAMPLED_PARENT });
    expect(tracing.stats().tracesCapped).toBe(95);
  });

  it('does not read a traceparent when OTEL_PROPAGATORS is none: every request starts its own trace', () => {
    const tracing = tracingWith({ OTEL_PROPAGATORS: 'none' });
    const span = tracing.startRequest('GET', '/x', { traceparent: UNSAMPLED_PARENT });
    expect(span.isRecording()).toBe(true);
    expect(span.spanContext().traceId).not.toBe('ab'.repeat(16));
  });

  it('stores the caller’s baggage with a job only when OTEL_PROPAGATORS reads it', () => {
    const headers = { traceparent: SAMPLED_PARENT, baggage: 'tenant=a%20b' };
    const stored = (env: Record<string, string>) => {
      const tracing = tracingWith(env);
      const submit = tracing.startJobSubmit(
        tracing.startRequest('POST', '/api/jobs', headers),
        'x',
      );
      return JSON.parse(submit?.context ?? '{}') as Record<string, string>;
    };
    expect(stored({})).toMatchObject({ baggage: 'tenant=a%20b' });
    expect(stored({})['traceparent']).toMatch(new RegExp(`^00-${'ab'.repeat(16)}-`));
    expect(stored({ OTEL_PROPAGATORS: 'tracecontext' })).not.toHaveProperty('baggage');
    // Baggage alone continues no trace.
    expect(stored({ OTEL_PROPAGATORS: 'baggage' })['traceparent']).not.toContain('ab'.repeat(16));
  });
});

describe(TraceCap.name, () => {
  it('lets a second’s worth through at once, then as many a second as it is given', () => {
    let now = 0;
    const cap = new TraceCap(10, () => now);
    expect(Array.from({ length: 12 }, () => cap.take()).filter(Boolean)).toHaveLength(10);
    expect(cap.capped).toBe(2);
    now += 250;
    expect(cap.hasRoom()).toBe(true);
    expect([cap.take(), cap.take(), cap.take()]).toEqual([true, true, false]);
    // Never more than a second's worth saved up.
    now += 60_000;
    expect(Array.from({ length: 20 }, () => cap.take()).filter(Boolean)).toHaveLength(10);
  });
});

describe(CappedSampler.name, () => {
  const sampled = (sampler: CappedSampler, context = ROOT_CONTEXT) =>
    sampler.shouldSample(context, 'ab'.repeat(16), 'span', SpanKind.SERVER, {}, []).decision;
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'ab'.repeat(16),
    spanId: 'cd'.repeat(8),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const local = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'ab'.repeat(16),
    spanId: 'cd'.repeat(8),
    traceFlags: TraceFlags.SAMPLED,
  });

  it('takes a trace’s room for a root or a remote parent’s child, none for a local child', () => {
    const sampler = new CappedSampler(new AlwaysOnSampler(), new TraceCap(2, () => 0));
    expect(sampled(sampler)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(sampled(sampler, remote)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(sampled(sampler, remote)).toBe(SamplingDecision.NOT_RECORD);
    expect(sampled(sampler)).toBe(SamplingDecision.NOT_RECORD);
    // A child of this process's own span follows its parent, which already took its room.
    expect(sampled(sampler, local)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });
});
