import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { identityOf } from '../auth/client-identity';

/**
 * Fastify's request logging, as one line per request: when it is answered,
 * with the request, the status and the time, at a level that follows the
 * status (info, warn from 400, error from 500). Fastify's extra "incoming
 * request" line goes to debug. The lines come from the request's own logger,
 * so they carry its `reqId`. Fastify's request serializer writes method, url,
 * host and remote address, never headers: credentials stay out of the logs.
 * `client` is the caller's id (a key's name, a token's client claim, or
 * `anonymous`), label-safe by construction (auth/client-id.ts).
 */
export class AccessLog extends LogController {
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
    const line = {
      req: request,
      res: reply,
      responseTime: reply.elapsedTime,
      client: identityOf(request).id,
    };
    if (error !== null && error !== undefined) {
      reply.log.error({ ...line, err: error }, 'request errored');
    } else if (reply.statusCode >= 500) {
      reply.log.error(line, 'request completed');
    } else if (reply.statusCode >= 400) {
      reply.log.warn(line, 'request completed');
    } else {
      reply.log.info(line, 'request completed');
    }
  }
}
