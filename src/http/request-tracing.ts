import type { FastifyRequest } from 'fastify';
import { activeTracing, type RequestSpan, type TraceIds, type Tracing } from '../tracing/tracing';
import { routeOf } from './request-context';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span when tracing is on; null otherwise. */
    traceSpan: RequestSpan | null;
  }
}

/**
 * The `onRequest` checks' step that begins a request's server span
 * (`request-checks.ts`): every request gets one, the routes Fastify calls
 * directly included. It ends in `onResponse`, or in `onRequestAbort` when
 * the client leaves (hooks.ts); those hooks exist only when tracing is on.
 */
export function requestSpanStarter(tracing: Tracing): (request: FastifyRequest) => void {
  return (request) => {
    const { url } = request;
    const query = url.indexOf('?');
    request.traceSpan = tracing.startRequest(
      request.method,
      routeOf(request),
      request.headers,
      query === -1 ? url : url.slice(0, query),
    );
  };
}

/** The trace and span ids of a request whose trace is sampled, for its log lines and problem body. */
export function traceIdsOf(request: FastifyRequest | undefined): TraceIds | undefined {
  // Tracing first: off, the request is not even looked at.
  const tracing = activeTracing();
  if (tracing === undefined) return undefined;
  const span = request?.traceSpan;
  return span ? tracing.idsOf(span) : undefined;
}
