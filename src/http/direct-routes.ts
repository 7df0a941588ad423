import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { answerProblem } from './problem-details.filter';

/** A route's work, called by Fastify itself: the body to send, or a promise of it. */
export type DirectHandler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** Direct handlers by `METHOD /route/template`, as the controllers declare the routes. */
export type DirectRoutes = ReadonlyMap<string, DirectHandler>;

/**
 * Fastify's `onRoute` hook: the routes named in `routes` are still declared
 * by their Nest controllers (OpenAPI, `@HttpBehaviour`), but Fastify calls
 * their handler directly instead of through Nest's pipeline (guards, pipes,
 * interceptors, the exception filter's host), which corepool does not use on
 * them: every check of theirs is a Fastify hook or inside the handler.
 * Errors are answered as the exception filter answers them. Measured in
 * docs/adr/0016-a-hot-path-designed-for-cost.md.
 */
export function directRoutes(routes: DirectRoutes) {
  return (route: RouteOptions): void => {
    if (typeof route.method !== 'string') return;
    const handler = routes.get(`${route.method} ${route.url}`);
    if (handler === undefined) return;
    route.handler = function direct(request, reply): void {
      // As Nest's Fastify adapter does: an empty route parameter matches no route.
      const params = request.params as Record<string, string>;
      for (const name in params) if (params[name] === '') return void reply.callNotFound();
      const send = (body: unknown) => {
        if (!reply.sent) void reply.send(body);
      };
      const fail = (error: unknown) => answerProblem(error, request, reply);
      let body: unknown;
      try {
        body = handler(request, reply);
      } catch (error) {
        return fail(error);
      }
      if (body instanceof Promise) body.then(send, fail);
      else send(body);
    };
  };
}
