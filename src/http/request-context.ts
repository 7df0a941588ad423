import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived; task deadlines count from here. */
    arrivedAt: number;
    /** Set by `routeOf` on first use; '' until then. */
    routeTemplate: string;
  }
}

/** The route of requests no route matched: one fixed value, never the raw URL. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * The template of the route that matched (`/api/tasks/:name`), or
 * `UNMATCHED_ROUTE`. Fastify builds `request.routeOptions` anew, a dozen
 * fields, on every read; logging, metrics and body parsing each need the
 * template, so it is read once per request.
 */
export function routeOf(request: FastifyRequest): string {
  if (request.routeTemplate === '') {
    request.routeTemplate = request.routeOptions.url ?? UNMATCHED_ROUTE;
  }
  return request.routeTemplate;
}

/** An incoming id is honoured only if it is short and plain, so it is safe in logs and headers. */
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Fastify's `genReqId`: honours a safe `x-request-id`, else makes a UUID.
 * Fastify binds it to the request's logger as `reqId`.
 */
export function requestId(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Stamps arrival time and echoes the request id on every response. Every
 * request runs this hook, so it is synchronous: an async hook costs a promise
 * and a trip through the microtask queue per request.
 */
export function registerRequestContext(fastify: FastifyInstance): void {
  fastify.decorateRequest('arrivedAt', 0);
  fastify.decorateRequest('routeTemplate', '');
  fastify.addHook('onRequest', (request, reply, done) => {
    request.arrivedAt = performance.now();
    void reply.header('x-request-id', request.id);
    done();
  });
}
