import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { AdminListener } from './admin-listener';
import {
  requestChecks,
  type AccessCheck,
  type DrainGate,
  type TaskQuotaCheck,
} from './request-checks';
import { reserveAnnouncedBody, guardBodyStream, hasBody } from './body-guard';
import type { BodyMemoryBudget } from './body-memory-budget';
import { registerDirectRoutes, type DirectRoutes } from './direct-routes';
import {
  announcedTooLarge,
  bodyLimitFor,
  registerBodyParsers,
  type BodyParserOptions,
} from './body-parsers';
import { lingerOnClose } from './lingering-close';
import type { OperatorLimit } from './operator-rate-limit';
import { problemCodeOf } from './problem-details.filter';
import { routeOf } from './request-context';
import { decorateRequestState } from './request-state';
import { requestSpanStarter } from './request-tracing';
import type { TraceIds, Tracing } from '../tracing/tracing';
import { compileRouteProfile } from './route-behaviour';

/** Where each answered request is reported (HttpMetricsService). */
export interface ResponseRecorder {
  record(sample: {
    method: string;
    route: string;
    statusCode: number;
    seconds: number;
    code: string | undefined;
    /** A sampled request's trace: its latency bucket links to it. */
    trace?: TraceIds | undefined;
  }): void;
}

export interface HookParticipants {
  readonly drain: DrainGate;
  readonly responses: ResponseRecorder;
  readonly bodies: BodyParserOptions;
  readonly access: AccessCheck;
  readonly taskQuota: TaskQuotaCheck;
  /** The bytes of bodies this process may hold at once. */
  readonly budget: BodyMemoryBudget;
  /** The listener of ADMIN_PORT, when set: operator routes answer there only. */
  readonly admin?: AdminListener;
  /** Requests per second per client on the operator routes; undefined: no limit. */
  readonly operatorLimit?: OperatorLimit;
  /** Routes whose handler Fastify calls without Nest's pipeline (`direct-routes.ts`). */
  readonly direct?: DirectRoutes;
  /** OpenTelemetry, when it is on: every request gets a server span (`request-tracing.ts`). */
  readonly tracing?: Tracing;
}

/**
 * Every Fastify hook of the service, in one place and in the order they run
 * (Fastify runs hooks of one kind in the order they were added). Register
 * before the app is initialised, so `onRoute` sees every route:
 *
 * 1. `onRoute`: compile each route's declared behaviour (`@HttpBehaviour`); the
 *    routes that run tasks get their handler called directly (`direct-routes.ts`).
 * 2. `onRequest`, one hook of steps (`request-checks.ts`):
 *    a. stamp arrival time (deadlines count from here), echo `x-request-id`;
 *       with tracing on, begin the server span (continuing a W3C `traceparent`);
 *    b. with ADMIN_PORT, a route answers only on its own listener
 *       (operator routes on the admin port, the rest on the public one); 404 elsewhere;
 *    c. the drain counts the request; once its budget has run out,
 *       it is refused with 503 SHUTTING_DOWN;
 *    d. an operator route (metrics, detailed health) over its client's
 *       `OPERATOR_REQUESTS_PER_SECOND`: 429 RATE_LIMITED, answered once the
 *       client's second is over (`operator-rate-limit.ts`);
 *    e. authentication and the route's scope (`@HttpBehaviour({ access })`):
 *       401 UNAUTHENTICATED or 403 FORBIDDEN before anything else is read; sets
 *       `request.identity`. Not on the admin listener, which only operator routes answer on;
 *    f. a request no route matched: 404 ROUTE_NOT_FOUND, before its body is read;
 *    g. a body announced larger than its route's limit (for a binary task, the
 *       cap its options may set; options that do not validate: 400): 413 before
 *       it is read; one that does not fit the memory budget: 503 (reason `memory`);
 *    h. a route that runs a task takes one of its client's tasks-in-flight slots,
 *       or gets 429 RATE_LIMITED.
 * 3. the route's own `onRequest` hooks: requests per second
 *    (`@fastify/rate-limit`, registered in auth/quotas.ts), 429 RATE_LIMITED.
 * 4. `preParsing`, on the routes that take a body: `100 Continue` if the client
 *    waits for it; the body decoded from its `Content-Encoding` (else 415) and
 *    held to its route's limit (413; or its options' cap, as in 2f) and the
 *    memory budget (503) as it streams.
 * 5. content-type parsers: JSON, or raw bytes for a binary task's route.
 * 6. `onSend`: `Connection: close` on every 503, on a response sent before its
 *    request's body was read to the end (a lingering close: the client reads
 *    the answer, the rest is not kept), while draining, once a connection
 *    is older than its maximum age, and when the primary asked this process
 *    to move it (ADR 0018), so the client reconnects — to another process,
 *    or to this one's replacement.
 * 7. `onResponse`: duration and error metrics by route template and problem code;
 *    with tracing on, a sampled request's duration keeps its trace as the bucket's
 *    exemplar, and the server span ends (or when the client left first: `request-tracing.ts`).
 *
 * The access log is Fastify's `logController` (logging/access-log.ts), which
 * reads the route's `accessLog` declaration; errors become problem+json in
 * the exception filter and Fastify's framework/client error handlers.
 *
 * Hooks that run for every request are synchronous: an async hook costs a
 * promise and a trip through the microtask queue per request.
 */
export function registerHooks(fastify: FastifyInstance, participants: HookParticipants): void {
  const {
    drain,
    responses,
    bodies,
    access,
    taskQuota,
    budget,
    admin,
    direct,
    operatorLimit,
    tracing,
  } = participants;
  // Declared up front, in one per-request object: a property added to some requests only would
  // change their shape, and each decorated value costs a keyed store per request.
  decorateRequestState(fastify);

  fastify.addHook('onRoute', compileRouteProfile);
  if (direct !== undefined) registerDirectRoutes(fastify, direct);

  // Node answers `Expect: 100-continue` itself, before any hook runs. Handing such a request
  // on unanswered lets a refusal (401, 413, 503, 415) come before the client sends a byte of
  // its body; `guardBodyStream` sends the 100 once the body is to be read.
  fastify.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    fastify.server.emit('request', request, response),
  );

  fastify.addHook(
    'onRequest',
    requestChecks({
      drain,
      access,
      taskQuota,
      admin,
      operatorLimit,
      tooLarge: announcedTooLarge(bodies),
      reserveBody: reserveAnnouncedBody(budget),
      startSpan: tracing === undefined ? undefined : requestSpanStarter(tracing),
    }),
  );

  // On the routes that take a body only: Fastify runs a global hook for every request, and
  // a GET has no body to guard, and the check costs every light request (ADR 0037). A request
  // no route matched is answered 404 in `onRequest`, before its body would be read.
  const guardBody = guardBodyStream(budget, bodyLimitFor(bodies));
  fastify.addHook('onRoute', (route) => {
    if (takesBody(route.method)) route.preParsing = [guardBody, ...hooksIn(route.preParsing)];
  });

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

  if (tracing === undefined) {
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
  } else {
    endSpansOnResponse(fastify, tracing, responses);
  }
}

/**
 * With tracing on, one `onResponse` hook records the response, with its trace when it is
 * sampled (the latency bucket's exemplar), and ends the server span. A sampled request whose
 * client leaves before its response ends its span itself (`request-tracing.ts`).
 */
function endSpansOnResponse(
  fastify: FastifyInstance,
  tracing: Tracing,
  responses: ResponseRecorder,
): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = request.traceSpan;
    const code = problemCodeOf(reply);
    responses.record({
      method: request.method,
      route: routeOf(request),
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      code,
      trace: span ? tracing.idsOf(span) : undefined,
    });
    if (span) tracing.endRequest(span, reply.statusCode, code);
    done();
  });
}

/** Methods whose requests Fastify reads a body of (its `bodywith` set: all but GET, HEAD, TRACE). */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE']);
const takesBody = (method: RouteOptions['method']): boolean =>
  (Array.isArray(method) ? method : [method]).some((one) => !BODYLESS_METHODS.has(one));

const hooksIn = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
