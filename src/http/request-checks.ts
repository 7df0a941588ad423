import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../auth/scopes';
import { Errors, type AppError } from '../common/app-error';
import type { AdminListener } from './admin-listener';
import type { OperatorLimit } from './operator-rate-limit';
import { sendProblem } from './problem-details.filter';
import { routeProfileOf, stampRequest } from './request-context';
import { UNMATCHED_ROUTE, type RouteProfile } from './route-behaviour';

/** The drain's say over each request (ShutdownService). */
export interface DrainGate {
  /** Counts the request in; false when it must be refused with SHUTTING_DOWN. */
  admits(request: IncomingMessage, response: ServerResponse): boolean;
  /** True when this response must ask its client to close the connection (draining, an old connection, or one asked to move). */
  closesConnection(request: IncomingMessage): boolean;
}

/** undefined lets the request on; an error is the answer. A promise only when it must wait (a JWKS, the primary). */
type Verdict = AppError | undefined | Promise<AppError | undefined>;

/** Authentication and scopes (auth/access-gate.ts): sets `request.identity`, or refuses with 401/403. */
export type AccessCheck = (request: FastifyRequest, access: RouteAccess) => Verdict;

/** The client's tasks-in-flight quota (auth/quotas.ts), for routes that run a task. */
export type TaskQuotaCheck = (request: FastifyRequest, reply: FastifyReply) => Verdict;

export interface RequestCheckParticipants {
  readonly drain: DrainGate;
  readonly access: AccessCheck;
  readonly taskQuota: TaskQuotaCheck;
  /** A body announced larger than its route's limit (413). */
  readonly tooLarge: (request: FastifyRequest) => AppError | undefined;
  /** A body announced larger than the memory budget can hold (503, reason `memory`). */
  readonly reserveBody: (request: FastifyRequest, reply: FastifyReply) => AppError | undefined;
  readonly admin?: AdminListener;
  /** Requests per second per client on the operator routes (`OPERATOR_REQUESTS_PER_SECOND`). */
  readonly operatorLimit?: OperatorLimit;
  /** Begins the request's server span, when tracing is on (`request-tracing.ts`). */
  readonly startSpan?: (request: FastifyRequest, reply: FastifyReply) => void;
}

type Done = (error?: Error) => void;

/**
 * The one `onRequest` hook: every check a request passes before its body is
 * read, in this order (hooks.ts lists what each answers):
 * stamp (and the server span, when tracing is on) → admin port → drain → operator quota →
 * access → route not found → announced body → task slot.
 *
 * One hook rather than one per step: Fastify's hook runner costs a call, a
 * `next` closure and a check of the reply per hook and request (ADR 0037 has
 * the count). Each step stays
 * synchronous unless it must wait (a JWKS, the primary), so a request that
 * needs no wait pays no promise.
 */
export function requestChecks(participants: RequestCheckParticipants) {
  const { drain, access, taskQuota, tooLarge, reserveBody, admin, operatorLimit, startSpan } =
    participants;

  /** After access: the announced body, then the task slot; `done` once all passed. */
  const afterAccess = (
    request: FastifyRequest,
    reply: FastifyReply,
    profile: RouteProfile,
    done: Done,
  ): void => {
    // Answered before its body is read: only the routes that take one guard its stream (hooks.ts).
    if (profile.template === UNMATCHED_ROUTE) {
      return done(Errors.routeNotFound(request.method, request.url));
    }
    if (request.headers['content-length'] !== undefined) {
      // An error passed to done() is answered by Fastify's error handler, as the
      // body parser's own 413 would be.
      const refusal = tooLarge(request) ?? reserveBody(request, reply);
      if (refusal !== undefined) return done(refusal);
    }
    if (!profile.runsTask) return done();
    const verdict = taskQuota(request, reply);
    if (verdict === undefined) return done();
    settle(request, reply, verdict, done, done);
  };

  /** Authentication and scope, then the rest. */
  const checkAccess = (
    request: FastifyRequest,
    reply: FastifyReply,
    profile: RouteProfile,
    onAdminPort: boolean,
    done: Done,
  ): void => {
    // The admin listener serves operator routes only, on a port the Service does not
    // expose (Prometheus scrapes it by pod address): its callers need no credentials.
    const verdict = onAdminPort ? undefined : access(request, profile.access);
    if (verdict === undefined) return afterAccess(request, reply, profile, done);
    settle(request, reply, verdict, done, () => afterAccess(request, reply, profile, done));
  };

  return (request: FastifyRequest, reply: FastifyReply, done: Done): void => {
    stampRequest(request, reply);
    startSpan?.(request, reply);
    const profile = routeProfileOf(request);
    const onAdminPort = admin?.carries(request.raw) === true;
    if (admin !== undefined && profile.admin !== onAdminPort) {
      return done(Errors.routeNotFound(request.method, request.url));
    }
    // A hook that answers does not call done(): the reply ends the request here.
    if (!drain.admits(request.raw, reply.raw)) {
      return void sendProblem(reply, Errors.shuttingDown(), request.url);
    }
    // Before access: a flood of requests with bad credentials is a flood too.
    if (profile.admin && operatorLimit !== undefined) {
      return operatorLimit(request, reply, () =>
        checkAccess(request, reply, profile, onAdminPort, done),
      );
    }
    checkAccess(request, reply, profile, onAdminPort, done);
  };
}

/**
 * Goes on with `next` once a verdict lets the request on; a refusal is
 * answered here. A refused request's body is never read: `onSend` sees it
 * unread and closes the connection after the answer (a lingering close).
 */
function settle(
  request: FastifyRequest,
  reply: FastifyReply,
  verdict: AppError | Promise<AppError | undefined>,
  done: Done,
  next: () => void,
): void {
  if (!(verdict instanceof Promise)) return void sendProblem(reply, verdict, request.url);
  verdict.then(
    (error) => (error === undefined ? next() : void sendProblem(reply, error, request.url)),
    (error: unknown) => done(error as Error),
  );
}
