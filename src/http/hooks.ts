import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../auth/scopes';
import { Errors, type AppError } from '../common/app-error';
import type { AdminListener } from './admin-listener';
import { admitAnnouncedBody, guardBodyStream, hasBody } from './body-admission';
import type { BodyMemoryBudget } from './body-memory-budget';
import { registerDirectRoutes, type DirectRoutes } from './direct-routes';
import {
  announcedTooLarge,
  bodyLimitFor,
  registerBodyParsers,
  type BodyParserOptions,
} from './body-parsers';
import { lingerOnClose } from './lingering-close';
import { problemCodeOf, sendProblem } from './problem-details.filter';
import { routeOf, routeProfileOf, stampRequest } from './request-context';
import { decorateRequestState } from './request-state';
import { compileRouteProfile } from './route-behaviour';

/** The drain's say over each request (ShutdownService). */
export interface DrainGate {
  /** Counts the request in; false when it must be refused with SHUTTING_DOWN. */
  admits(request: IncomingMessage, response: ServerResponse): boolean;
  /** True when this response must ask its client to close the connection (draining, an old connection, or one asked to move). */
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
  /** The bytes of bodies this process may hold at once. */
  readonly budget: BodyMemoryBudget;
  /** The listener of ADMIN_PORT, when set: operator routes answer there only. */
  readonly admin?: AdminListener;
  /** Routes whose handler Fastify calls without Nest's pipeline (`direct-routes.ts`). */
  readonly direct?: DirectRoutes;
}

/**
 * Every Fastify hook of the service, in one place and in the order they run
 * (Fastify runs hooks of one kind in the order they were added). Register
 * before the app is initialised, so `onRoute` sees every route:
 *
 * 1. `onRoute`: compile each route's declared behaviour (`@HttpBehaviour`); the
 *    routes that run tasks get their handler called directly (`direct-routes.ts`).
 * 2. `onRequest`: stamp arrival time (deadlines count from here), echo `x-request-id`.
 * 3. `onRequest`: with ADMIN_PORT, a route answers only on its own listener
 *    (operator routes on the admin port, the rest on the public one); 404 elsewhere.
 * 4. `onRequest`: the drain counts the request; once its budget has run out,
 *    it is refused with 503 SHUTTING_DOWN.
 * 5. `onRequest`: authentication and the route's scope (`@HttpBehaviour({ access })`):
 *    401 UNAUTHENTICATED or 403 FORBIDDEN before anything else is read; sets `request.identity`.
 *    Not on the admin listener, which only operator routes answer on.
 * 6. `onRequest`: a body announced larger than its route's limit: 413 before
 *    it is read; one that does not fit the memory budget: 503 (reason `memory`).
 * 7. `onRequest`: a route that runs a task takes one of its client's tasks-in-flight slots,
 *    or gets 429 RATE_LIMITED; then the route's own hooks: requests per second
 *    (`@fastify/rate-limit`, registered in auth/quotas.ts), 429 RATE_LIMITED.
 * 8. `preParsing`: `100 Continue` if the client waits for it; the body decoded
 *    from its `Content-Encoding` (else 415) and held to its route's limit (413)
 *    and the memory budget (503) as it streams.
 * 9. content-type parsers: JSON, or raw bytes for a binary task's route.
 * 10. `onSend`: `Connection: close` on every 503, on a response sent before its
 *    request's body was read to the end (a lingering close: the client reads
 *    the answer, the rest is not kept), while draining, once a connection
 *    is older than its maximum age, and when the primary asked this process
 *    to move it (ADR 0018), so the client reconnects — to another process,
 *    or to this one's replacement.
 * 11. `onResponse`: duration and error metrics by route template and problem code.
 *
 * The access log is Fastify's `logController` (logging/access-log.ts), which
 * reads the route's `accessLog` declaration; errors become problem+json in
 * the exception filter and Fastify's framework/client error handlers.
 *
 * Hooks that run for every request are synchronous: an async hook costs a
 * promise and a trip through the microtask queue per request.
 */
export function registerHooks(fastify: FastifyInstance, participants: HookParticipants): void {
  const { drain, responses, bodies, access, taskAdmission, budget, admin, direct } = participants;
  // Declared up front, in one per-request object: a property added to some requests only would
  // change their shape, and each decorated value costs a keyed store per request.
  decorateRequestState(fastify);

  fastify.addHook('onRoute', compileRouteProfile);
  if (direct !== undefined) registerDirectRoutes(fastify, direct);

  fastify.addHook('onRequest', (request, reply, done) => {
    stampRequest(request, reply);
    done();
  });

  if (admin !== undefined) {
    fastify.addHook('onRequest', (request, _reply, done) => {
      if (routeProfileOf(request).admin === admin.carries(request.raw)) return done();
      done(Errors.routeNotFound(request.method, request.url));
    });
  }

  fastify.addHook('onRequest', (request, reply, done) => {
    if (drain.admits(request.raw, reply.raw)) return done();
    // A hook that answers does not call done(): the reply ends the request here.
    void sendProblem(reply, Errors.shuttingDown(), request.url);
  });

  // The admin listener serves operator routes only, on a port the Service does not expose
  // (Prometheus scrapes it by pod address): its callers need no credentials.
  const onAdminPort = (request: FastifyRequest) => admin?.carries(request.raw) === true;
  fastify.addHook(
    'onRequest',
    gate((request) =>
      onAdminPort(request) ? undefined : access(request, routeProfileOf(request).access),
    ),
  );

  // Node answers `Expect: 100-continue` itself, before any hook runs. Handing such a request
  // on unanswered lets a refusal (401, 413, 503, 415) come before the client sends a byte of
  // its body; `guardBodyStream` sends the 100 once the body is to be read.
  fastify.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    fastify.server.emit('request', request, response),
  );

  const tooLarge = announcedTooLarge(bodies);
  const admitBody = admitAnnouncedBody(budget);
  fastify.addHook('onRequest', (request, reply, done) =>
    done(tooLarge(request) ?? admitBody(request, reply)),
  );

  fastify.addHook(
    'onRequest',
    gate((request, reply) =>
      routeProfileOf(request).runsTask ? taskAdmission(request, reply) : undefined,
    ),
  );

  fastify.addHook('preParsing', guardBodyStream(budget, bodyLimitFor(bodies)));

  registerBodyParsers(fastify, bodies);

  fastify.addHook('onSend', (request, reply, payload, done) => {
    // The task is done once its answer goes out: its client may send the next one at once.
    request.releaseTaskSlot?.();
    // A process that answers 503 is full or going away: the client's next try on a new
    // connection may land on a process that is not. A body refused before its end is
    // not read on: closing is the only way not to.
    // A request without a body has nothing left to read, even if Node has not marked it
    // complete yet (an answer sent in the tick its headers arrived: a direct route).
    const bodyLeftUnread = !request.raw.complete && hasBody(request);
    if (bodyLeftUnread) lingerOnClose(request.raw);
    if (reply.statusCode === 503 || bodyLeftUnread || drain.closesConnection(request.raw)) {
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
 * A refused request's body is never read: `onSend` sees it unread and closes
 * the connection after the answer (a lingering close), so Node does not read
 * and discard the rest to reuse it.
 */
function refuse(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  return sendProblem(reply, error, request.url);
}
