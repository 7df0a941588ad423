import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal that fires when the client goes away before its response is
 * written. The response's `close` event is the reliable sign: the request's
 * own `close` fires as soon as the body has been read.
 */
export function clientAbortSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
}
