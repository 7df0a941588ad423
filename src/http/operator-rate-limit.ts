import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../common/app-error';
import { sendProblem } from './problem-details.filter';

/** The window of `OPERATOR_REQUESTS_PER_SECOND`. */
const WINDOW_MS = 1_000;

/** Lets the request on with `next`, or answers it 429 itself. */
export type OperatorLimit = (
  request: FastifyRequest,
  reply: FastifyReply,
  next: () => void,
) => void;

/**
 * `OPERATOR_REQUESTS_PER_SECOND`: the operator routes (metrics, detailed
 * health) per client address, counted in this process by `@fastify/rate-limit`
 * (its local store: bounded, an IPv6 client keyed by its subnet). An operator
 * route answers from a shared gathering, yet each answer still costs the event
 * loop a request; a client over its quota gets 429 `RATE_LIMITED` once its
 * window is over, not at once: a client that retries as soon as it is
 * answered (a closed loop) then sends one request a window per connection,
 * so refusals cannot become the flood (docs/adr/0043-readiness-means-can-serve.md).
 * Undefined when the limit is 0.
 */
export async function registerOperatorRateLimit(
  fastify: FastifyInstance,
  perSecond: number,
): Promise<OperatorLimit | undefined> {
  if (perSecond === 0) return undefined;
  // `global: false`: no route gets the plugin's own hook; only this check counts.
  await fastify.register(rateLimit, { global: false });
  const check = fastify.createRateLimit({ max: perSecond, timeWindow: WINDOW_MS });
  return (request, reply, next) => {
    check(request).then(
      (result) => {
        if (result.isAllowed || !result.isExceeded) return next();
        const refusal = Errors.rateLimited(
          'operator requests per second',
          result.max,
          Math.max(1, result.ttlInSeconds),
        );
        setTimeout(() => {
          // A client that left meanwhile needs no answer.
          if (!reply.sent && !request.raw.socket.destroyed) {
            sendProblem(reply, refusal, request.url);
          }
        }, result.ttl);
      },
      // The local store does not fail; if it did, the request would go on uncounted.
      () => next(),
    );
  };
}
