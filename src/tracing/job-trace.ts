/**
 * A job's trace context as it is stored with the job: the W3C headers of its
 * submit span (`traceparent`, `tracestate` when the caller sent one, and
 * `baggage` when the caller sent some and `OTEL_PROPAGATORS` reads it) as a
 * JSON object, the carrier BullMQ's own telemetry keeps in a job's options.
 * Written only when the submission was traced and sampled (ADR 0048): with
 * tracing off, nothing is stored and nothing here runs. No SDK import: the
 * job stores and views read it.
 */
export type StoredTraceContext = string;

/** The W3C headers a job's context holds. */
export interface StoredTraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
  readonly baggage?: string;
}

/** W3C trace context version 00: `00-<trace id>-<parent id>-<flags>`. */
const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The headers of a stored context; undefined when it is not one (a store written by something else). */
export function traceHeadersOf(stored: StoredTraceContext): StoredTraceHeaders | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { traceparent, tracestate, baggage } = parsed as Record<string, unknown>;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  return {
    traceparent,
    ...(typeof tracestate === 'string' ? { tracestate } : {}),
    ...(typeof baggage === 'string' ? { baggage } : {}),
  };
}

/** The trace id a job's view shows: the submitter's trace, which every run of the job continues. */
export function traceIdOf(stored: StoredTraceContext | null | undefined): string | undefined {
  if (stored === null || stored === undefined) return undefined;
  return TRACEPARENT.exec(traceHeadersOf(stored)?.traceparent ?? '')?.[1];
}
