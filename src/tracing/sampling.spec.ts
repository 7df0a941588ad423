import pino from 'pino';
import type { AppConfig } from '../config/app-config';
import { OtelTracing } from './otel-tracing';

type Sampler = AppConfig['tracing']['sampler'];

const SAMPLED_PARENT = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
const UNSAMPLED_PARENT = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-00`;

describe('sampling a request span', () => {
  const tracings: OtelTracing[] = [];
  afterAll(() => Promise.all(tracings.map((tracing) => tracing.shutdown())));

  /** How many of `count` requests with these headers get a recording span. */
  function recorded(sampler: Sampler, ratio: number, headers: Record<string, string>, count = 1) {
    const tracing = new OtelTracing(
      {
        enabled: true,
        // Nothing is exported: no span is ended.
        endpoint: 'http://127.0.0.1:9',
        protocol: 'http/json',
        serviceName: 'corepool-test',
        sampler,
        samplerRatio: ratio,
        exportDelayMs: 60_000,
        resourceAttributes: {},
      },
      pino({ enabled: false }),
    );
    tracings.push(tracing);
    let recording = 0;
    for (let i = 0; i < count; i++) {
      if (tracing.startRequest('GET', '/x', headers, '/x').isRecording()) recording++;
    }
    return recording;
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
});
