import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { identityOf } from '../auth/client-identity';
import { problemCodeOf } from '../http/problem-details.filter';
import { traceIdsOf } from '../http/request-tracing';
import { accessFields } from './access-fields';
import { LazyRequestLogger } from './lazy-request-logger';
import { RefusalSample } from './refusal-sample';

/**
 * Fastify's request logging, as one line per request: when it is answered,
 * with the request, the status and the time, at a level that follows the
 * status (info, warn from 400, error from 500). Fastify's extra "incoming
 * request" line goes to debug. The lines come from the request's own logger,
 * so they carry its `reqId`. Fastify's request serializer writes method, url,
 * host and remote address, never headers: credentials stay out of the logs.
 * `client` is the caller's id (a key's name, a token's client claim, or
 * `anonymous`), label-safe by construction (auth/client-id.ts). Refusals
 * (503 `POOL_SATURATED`) get one line a second at most (`RefusalSample`).
 */
export class AccessLog extends LogController {
  private readonly refusals = new RefusalSample();

  /**
   * `unlogged`: requests that get no line. Routes declare it
   * (`@HttpBehaviour({ accessLog: false })`): probes and scrapes come every
   * few seconds, from machines, and each line would say the same thing.
   */
  constructor(unlogged: (request: FastifyRequest) => boolean) {
    super({ disableRequestLogging: unlogged });
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    const client = identityOf(request).id;
    const responseTime = reply.elapsedTime;
    const trace = traceIdsOf(request);
    const traceFields =
      trace === undefined ? {} : { trace_id: trace.traceId, span_id: trace.spanId };
    if (error !== null && error !== undefined) {
      reply.log.error(
        { req: request, res: reply, responseTime, client, ...traceFields, err: error },
        'request errored',
      );
      return;
    }
    const { statusCode } = reply;
    if (statusCode === 503 && problemCodeOf(reply) === 'POOL_SATURATED') {
      const refusalsNotLogged = this.refusals.take();
      if (refusalsNotLogged === undefined) return;
      reply.log.warn(
        { req: request, res: reply, responseTime, client, ...traceFields, refusalsNotLogged },
        'request refused',
      );
      return;
    }
    const level = statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info';
    // The line as one string where it is pino's plain line (ADR 0029): pino's serialisers and
    // its field loop were much of what a tiny task's access line cost the event loop.
    const { log } = reply;
    const written =
      log instanceof LazyRequestLogger &&
      log.writeFields(
        level,
        () => accessFields(request, reply, client, responseTime, trace),
        'request completed',
      );
    if (!written) {
      log[level](
        { req: request, res: reply, responseTime, client, ...traceFields },
        'request completed',
      );
    }
  }
}
