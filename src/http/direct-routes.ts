import type { Type } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { answerProblem } from './problem-details.filter';
import { skippedEnhancers } from './skipped-enhancers';

/** A route's work, called by Fastify itself: the body to send, or a promise of it. */
export type DirectHandler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** A route Fastify calls directly, and the controller method that declares it. */
export interface DirectRoute {
  readonly controller: Type<unknown>;
  readonly method: string;
  readonly handler: DirectHandler;
}

/** Direct routes by `METHOD /route/template`, as the controllers declare the routes. */
export type DirectRoutes = ReadonlyMap<string, DirectRoute>;

/**
 * Fastify's `onRoute` hook: the routes named in `routes` are still declared
 * by their Nest controllers (OpenAPI, `@HttpBehaviour`), but Fastify calls
 * their handler directly instead of through Nest's pipeline (guards, pipes,
 * interceptors, the exception filter's host), which corepool does not use on
 * them: every check of theirs is a Fastify hook or inside the handler.
 * Errors are answered as the exception filter answers them. Measured in
 * docs/adr/0016-a-hot-path-designed-for-cost.md.
 *
 * A guard, interceptor, pipe or filter declared on such a method or its
 * controller would silently never run, so it stops the start, named.
 */
export function registerDirectRoutes(fastify: FastifyInstance, routes: DirectRoutes): void {
  refuseSkippedEnhancers(routes);
  const applied = new Set<string>();
  fastify.addHook('onRoute', (route) => {
    const key = typeof route.method === 'string' ? `${route.method} ${route.url}` : undefined;
    const direct = key === undefined ? undefined : routes.get(key);
    if (key === undefined || direct === undefined) return;
    applied.add(key);
    directly(route, direct.handler);
  });
  // A controller whose route moved would silently go back to Nest's pipeline: refuse to start.
  fastify.addHook('onReady', (done) => {
    const missing = [...routes.keys()].filter((key) => !applied.has(key));
    done(
      missing.length === 0 ? undefined : new Error(`No route declared for ${missing.join(', ')}`),
    );
  });
}

function refuseSkippedEnhancers(routes: DirectRoutes): void {
  const refusals = [...routes].flatMap(([key, { controller, method }]) => {
    const skipped = skippedEnhancers(controller, method);
    if (skipped.length === 0) return [];
    return [`${key} (${controller.name}.${method}) declares ${skipped.join(', ')}`];
  });
  if (refusals.length === 0) return;
  throw new Error(
    `Fastify calls these routes directly, so Nest would never run their enhancers: ` +
      `${refusals.join('; ')}. Do the work in a Fastify hook or the handler, ` +
      `or take the route out of the direct routes.`,
  );
}

function directly(route: RouteOptions, handler: DirectHandler): void {
  route.handler = function direct(request, reply): void {
    // As Nest's Fastify adapter does: an empty route parameter matches no route.
    const params = request.params as Record<string, string>;
    for (const name in params) if (params[name] === '') return void reply.callNotFound();
    let body: unknown;
    try {
      body = handler(request, reply);
    } catch (error) {
      return answerProblem(error, request, reply);
    }
    if (!(body instanceof Promise)) return sendUnlessSent(reply, body);
    body.then(
      (value) => sendUnlessSent(reply, value),
      (error: unknown) => answerProblem(error, request, reply),
    );
  };
}

/** A handler that answered itself (a problem, bytes with their headers) keeps its answer. */
function sendUnlessSent(reply: FastifyReply, body: unknown): void {
  if (!reply.sent) void reply.send(body);
}
