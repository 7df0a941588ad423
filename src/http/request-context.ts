import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived; task deadlines count from here. */
    arrivedAt: number;
  }
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
  fastify.addHook('onRequest', (request, reply, done) => {
    request.arrivedAt = performance.now();
    void reply.header('x-request-id', request.id);
    done();
  });
}
