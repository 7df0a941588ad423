import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Errors } from '../common/app-error';
import type { AdminListener } from './admin-listener';
import { admitAnnouncedBody, guardBodyStream } from './body-admission';
import type { BodyMemoryBudget } from './body-memory-budget';
import {
  announcedTooLarge,
  bodyLimitFor,
  registerBodyParsers,
  type BodyParserOptions,
} from './body-parsers';
import { lingerOnClose } from './lingering-close';
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

export interface HookParticipants {
  readonly drain: DrainGate;
  readonly responses: ResponseRecorder;
  readonly bodies: BodyParserOptions;
  /** The bytes of bodies this process may hold at once. */
  readonly budget: BodyMemoryBudget;
  /** The listener of ADMIN_PORT, when set: operator routes answer there only. */
  readonly admin?: AdminListener;
}

/**
 * Every Fastify hook of the service, in one place and in the order they run
 * (Fastify runs hooks of one kind in the order they were added). Register
 * before the app is initialised, so `onRoute` sees every route:
 *
 * 1. `onRoute`: compile each route's declared behaviour (`@HttpBehaviour`).
 * 2. `onRequest`: stamp arrival time (deadlines count from here), echo `x-request-id`.
 * 3. `onRequest`: with ADMIN_PORT, a route answers only on its own listener
 *    (operator routes on the admin port, the rest on the public one); 404 elsewhere.
 * 4. `onRequest`: the drain counts the request; once its budget has run out,
 *    it is refused with 503 SHUTTING_DOWN.
 * 5. `onRequest`: a body announced larger than its route's limit: 413 before
 *    it is read; one that does not fit the memory budget: 503 (reason `memory`).
 * 6. `preParsing`: `100 Continue` if the client waits for it; the body decoded
 *    from its `Content-Encoding` (else 415) and held to its route's limit (413)
 *    and the memory budget (503) as it streams.
 * 7. content-type parsers: JSON, or raw bytes for a binary task's route.
 * 8. `onSend`: `Connection: close` on every 503, on a response sent before its
 *    request's body was read to the end (a lingering close: the client reads
 *    the answer, the rest is not kept), while draining,
 *    and once a connection is older than its maximum age, so the client
 *    reconnects — to another process, or to this one's replacement.
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
  const { drain, responses, bodies, budget, admin } = participants;
  fastify.decorateRequest('arrivedAt', 0);
  fastify.decorateRequest('routeProfile', null);

  fastify.addHook('onRoute', compileRouteProfile);

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

  // Node answers `Expect: 100-continue` itself, before any hook runs. Handing such a request
  // on unanswered lets a refusal (413, 503, 415) come before the client sends a byte of its
  // body; `guardBodyStream` sends the 100 once the body is to be read.
  fastify.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    fastify.server.emit('request', request, response),
  );

  const tooLarge = announcedTooLarge(bodies);
  const admitBody = admitAnnouncedBody(budget);
  fastify.addHook('onRequest', (request, reply, done) =>
    done(tooLarge(request) ?? admitBody(request, reply)),
  );

  fastify.addHook('preParsing', guardBodyStream(budget, bodyLimitFor(bodies)));

  registerBodyParsers(fastify, bodies);

  fastify.addHook('onSend', (request, reply, payload, done) => {
    // A process that answers 503 is full or going away: the client's next try on a new
    // connection may land on a process that is not. A body refused before its end is
    // not read on: closing is the only way not to.
    const bodyLeftUnread = !request.raw.complete;
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
