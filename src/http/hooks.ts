import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../auth/scopes';
import { Errors, type AppError } from '../common/app-error';
import { announcedTooLarge, registerBodyParsers, type BodyParserOptions } from './body-parsers';
import { problemCodeOf, sendProblem } from './problem-details.filter';
import { routeOf, routeProfileOf, stampRequest } from './request-context';
import { compileRouteProfile } from './route-behaviour';

/** The drain's say over each request (ShutdownService). */
export interface DrainGate {
  /** Counts the request in; false when it must be refused with SHUTTING_DOWN. */
  admits(request: IncomingMessage, response: ServerResponse): boolean;
  /** True when this response must ask its client to close the connection (draining, or an old connection). */
  closesConnection(request: IncomingMessage): boolean;
}

/** Where each answered request is reported (HttpMetricsService). */
export interface ResponseRecorder {
  record(sample: {
    method: string;
    route: string;
    statusCode: number;
    seconds: number;
    code: string | undefined;
  }): void;
}

/** undefined lets the request on; an error is the answer. A promise only when it must wait (a JWKS, the primary). */
type Verdict = AppError | undefined | Promise<AppError | undefined>;

/** Authentication and scopes (auth/access-gate.ts): sets `request.identity`, or refuses with 401/403. */
export type AccessCheck = (request: FastifyRequest, access: RouteAccess) => Verdict;

/** The client's tasks-in-flight quota (auth/quotas.ts), for routes that run a task. */
export type TaskAdmission = (request: FastifyRequest, reply: FastifyReply) => Verdict;

export interface HookParticipants {
  readonly drain: DrainGate;
  readonly responses: ResponseRecorder;
  readonly bodies: BodyParserOptions;
  readonly access: AccessCheck;
  readonly taskAdmission: TaskAdmission;
}

/**
 * Every Fastify hook of the service, in one place and in the order they run
 * (Fastify runs hooks of one kind in the order they were added). Register
 * before the app is initialised, so `onRoute` sees every route:
 *
 * 1. `onRoute`: compile each route's declared behaviour (`@HttpBehaviour`).
 * 2. `onRequest`: stamp arrival time (deadlines count from here), echo `x-request-id`.
 * 3. `onRequest`: the drain counts the request; once its budget has run out,
 *    it is refused with 503 SHUTTING_DOWN.
 * 4. `onRequest`: authentication and the route's scope (`@HttpBehaviour({ access })`):
 *    401 UNAUTHENTICATED or 403 FORBIDDEN before anything else is read; sets `request.identity`.
 * 5. `onRequest`: a body announced larger than its route's limit: 413 before it is read.
 * 6. `onRequest`: a route that runs a task takes one of its client's tasks-in-flight slots,
 *    or gets 429 RATE_LIMITED; then the route's own hooks: requests per second
 *    (`@fastify/rate-limit`, registered in auth/quotas.ts), 429 RATE_LIMITED.
 * 7. content-type parsers: JSON, or raw bytes for a binary task's route.
 * 8. `onSend`: `Connection: close` on every 503, while draining, and once a
 *    connection is older than its maximum age, so the client reconnects —
 *    to another process, or to this one's replacement.
 * 9. `onResponse`: duration and error metrics by route template and problem code.
 *
 * The access log is Fastify's `logController` (logging/access-log.ts), which
 * reads the route's `accessLog` declaration; errors become problem+json in
 * the exception filter and Fastify's framework/client error handlers.
 *
 * Hooks that run for every request are synchronous: an async hook costs a
 * promise and a trip through the microtask queue per request.
 */
export function registerHooks(fastify: FastifyInstance, participants: HookParticipants): void {
  const { drain, responses, bodies, access, taskAdmission } = participants;
  fastify.decorateRequest('arrivedAt', 0);
  fastify.decorateRequest('routeProfile', null);
  // Declared up front: a property added to some requests only would change their shape.
  fastify.decorateRequest('identity', null);

  fastify.addHook('onRoute', compileRouteProfile);

  fastify.addHook('onRequest', (request, reply, done) => {
    stampRequest(request, reply);
    done();
  });

  fastify.addHook('onRequest', (request, reply, done) => {
    if (drain.admits(request.raw, reply.raw)) return done();
    // A hook that answers does not call done(): the reply ends the request here.
    void sendProblem(reply, Errors.shuttingDown(), request.url);
  });

  fastify.addHook(
    'onRequest',
    gate((request) => access(request, routeProfileOf(request).access)),
  );

  const tooLarge = announcedTooLarge(bodies);
  fastify.addHook('onRequest', (request, _reply, done) => done(tooLarge(request)));

  fastify.addHook(
    'onRequest',
    gate((request, reply) =>
      routeProfileOf(request).runsTask ? taskAdmission(request, reply) : undefined,
    ),
  );

  registerBodyParsers(fastify, bodies);

  fastify.addHook('onSend', (request, reply, payload, done) => {
    // A process that answers 503 is full or going away: the client's next try on a new
    // connection may land on a process that is not.
    if (reply.statusCode === 503 || drain.closesConnection(request.raw)) {
      void reply.header('connection', 'close');
    }
    done(null, payload);
  });

  fastify.addHook('onResponse', (request, reply, done) => {
    responses.record({
      method: request.method,
      route: routeOf(request),
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      code: problemCodeOf(reply),
    });
    done();
  });
}

/**
 * An `onRequest` hook from a check: synchronous while the check is, so a
 * request that needs no wait (API keys, no quota) pays no promise.
 */
function gate(check: (request: FastifyRequest, reply: FastifyReply) => Verdict) {
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const verdict = check(request, reply);
    if (verdict === undefined) return done();
    if (!(verdict instanceof Promise)) return void refuse(request, reply, verdict);
    verdict.then(
      (error) => (error === undefined ? done() : void refuse(request, reply, error)),
      (error: unknown) => done(error as Error),
    );
  };
}

/**
 * A refused request's body is never read: the connection closes after the
 * answer, so Node does not read and discard the rest to reuse it.
 */
function refuse(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const announcesBody =
    request.headers['transfer-encoding'] !== undefined ||
    Number(request.headers['content-length'] ?? 0) > 0;
  if (announcesBody) void reply.header('connection', 'close');
  return sendProblem(reply, error, request.url);
}
