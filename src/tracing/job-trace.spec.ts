import { traceHeadersOf, traceIdOf } from './job-trace';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe('a job’s stored trace context', () => {
  it('gives back the W3C headers it was stored with, and the trace id the view shows', () => {
    const stored = JSON.stringify({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    expect(traceHeadersOf(stored)).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    expect(traceIdOf(stored)).toBe(TRACE_ID);
    expect(traceHeadersOf(JSON.stringify({ traceparent: TRACEPARENT }))).toEqual({
      traceparent: TRACEPARENT,
    });
  });

  it.each([
    ['not JSON', 'traceparent'],
    ['not an object', '"x"'],
    ['null', 'null'],
    ['no traceparent', '{"tracestate":"a=1"}'],
    ['another version', JSON.stringify({ traceparent: `01-${TRACE_ID}-00f067aa0ba902b7-01` })],
    ['a short trace id', JSON.stringify({ traceparent: '00-4bf9-00f067aa0ba902b7-01' })],
  ])('reads %s as no context: the job runs untraced, its view has no traceId', (_case, stored) => {
    expect(traceHeadersOf(stored)).toBeUndefined();
    expect(traceIdOf(stored)).toBeUndefined();
  });

  it('has no trace id when nothing was stored', () => {
    expect(traceIdOf(null)).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });
});
