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
 * Fastify's `genReqId`: honours a safe `x-request-id`, else makes a UUID. The
 * id is also put on the raw request, where pino-http looks for it, so every
 * log line of the request carries the same id.
 */
export function requestId(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  (raw as IncomingMessage & { id?: string }).id = id;
  return id;
}

/** Stamps arrival time and echoes the request id on every response. */
export function registerRequestContext(fastify: FastifyInstance): void {
  fastify.decorateRequest('arrivedAt', 0);
  fastify.addHook('onRequest', async (request, reply) => {
    request.arrivedAt = performance.now();
    void reply.header('x-request-id', request.id);
  });
}
