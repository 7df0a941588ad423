import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  activeTracing,
  type RequestSpan,
  type ServerRequestFacts,
  type TraceIds,
  type Tracing,
} from '../tracing/tracing';
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
 * directly included. It ends in `onResponse` (hooks.ts, a hook that exists
 * only when tracing is on), or when a sampled request's client leaves first.
 */
export function requestSpanStarter(
  tracing: Tracing,
): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const route = routeOf(request);
    const span = tracing.startRequest(request.method, route, request.headers);
    request.traceSpan = span;
    // A client that leaves first ends the span here, for a sampled request only: Fastify's
    // `onRequestAbort` hook would add a listener and a closure to every request, sampled or
    // not (profiled: docs/adr/0048-threads-record-their-spans-an-export-thread-sends-them.md).
    // The response's `close` without `finish` is a connection that closed before the answer.
    if (span.isRecording()) {
      tracing.describeRequest(span, serverRequestFacts(request, route));
      const response = reply.raw;
      response.once('close', () => {
        // 499, nginx's "client closed request": the usual status of a request whose client left first.
        if (!response.writableFinished) tracing.endRequest(span, 499, 'CLIENT_CLOSED_REQUEST');
      });
    }
  };
}

/** What the server span says of a sampled request, as Fastify read it (its `trustProxy` applied). */
function serverRequestFacts(request: FastifyRequest, route: string): ServerRequestFacts {
  const { socket, httpVersion } = request.raw;
  const userAgent = request.headers['user-agent'];
  return {
    method: request.method,
    route,
    url: request.url,
    scheme: request.protocol,
    host: request.host,
    clientAddress: request.ip,
    peerAddress: socket.remoteAddress,
    peerPort: socket.remotePort,
    httpVersion,
    userAgent: typeof userAgent === 'string' ? userAgent : undefined,
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
