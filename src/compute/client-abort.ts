import type { FastifyReply } from 'fastify';
import { Cancellation } from '@corepool/core';

/**
 * Aborts when the client goes away before its response is written. The
 * response's `close` event is the reliable sign: the request's own `close`
 * fires as soon as the body has been read.
 */
export function clientGone(reply: FastifyReply): Cancellation {
  const gone = new Cancellation();
  const response = reply.raw;
  response.once('close', () => {
    if (!response.writableFinished) gone.abort('client gone');
  });
  return gone;
}
