import {
  Catch,
  HttpException,
  HttpStatus,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, type FieldError } from '../common/app-error';
import { headersOf, httpOf } from './error-table';
import { traceIdsOf } from './request-tracing';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 problem details, plus corepool's stable `code` and, for validation, `errors`. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  errors?: readonly FieldError[];
  /** How many fields failed; `errors` lists at most the first few. */
  errorCount?: number;
  /** POOL_SATURATED: why (`deadline`, `queue-delay`, `backstop`), so a client can tell them apart. */
  reason?: string;
  /** The bound that was passed, in its code's unit (bytes for PAYLOAD_TOO_LARGE). */
  limit?: number;
  /** The request's trace id when it is traced: a user's error report leads to its trace. */
  traceId?: string;
}

/**
 * Where exceptions become HTTP: every exception, from our code, from Nest or
 * from Fastify's body parsing, leaves as problem+json with a code, its status
 * and title from the error table.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    answerProblem(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}

/**
 * Answers a route's exception as problem+json (unless the reply is already
 * sent or its client gone): the filter's work, also done by the routes
 * Fastify calls directly (`direct-routes.ts`).
 */
export function answerProblem(
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const error = toAppError(exception, request);
  if (reply.sent || reply.raw.destroyed) return;
  void sendProblem(reply, error, request.url);
}

function toAppError(exception: unknown, request: FastifyRequest): AppError {
  if (exception instanceof AppError) return exception;
  const fromFastify = fastifyError(exception);
  if (fromFastify !== undefined) return fromFastify;
  if (exception instanceof HttpException) return fromHttpException(exception, request);
  // The request's own logger: the line carries its reqId.
  request.log.error({ err: exception }, 'unhandled error; answered 500 INTERNAL_ERROR');
  return Errors.internal();
}

/** The code of the problem each reply was answered with, for the HTTP error metrics. */
const problemCodes = new WeakMap<FastifyReply, string>();

/** Answers with the error as problem+json, with its status and headers; every error reply goes through here. */
export function sendProblem(reply: FastifyReply, error: AppError, instance?: string): FastifyReply {
  problemCodes.set(reply, error.code);
  return reply
    .status(httpOf(error.code).status)
    .headers({ ...headersOf(error), 'content-type': PROBLEM_CONTENT_TYPE })
    .send(toProblem(error, instance, traceIdsOf(reply.request)?.traceId));
}

/** The problem code a reply was sent with, if it was a problem. */
export function problemCodeOf(reply: FastifyReply): string | undefined {
  return problemCodes.get(reply);
}

export function toProblem(error: AppError, instance?: string, traceId?: string): ProblemDetails {
  const { status, title } = httpOf(error.code);
  return {
    type: `urn:corepool:problem:${error.code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    detail: error.detail,
    code: error.code,
    ...(instance === undefined ? {} : { instance }),
    ...(error.facts.errors === undefined
      ? {}
      : {
          errors: error.facts.errors,
          errorCount: error.facts.errorCount ?? error.facts.errors.length,
        }),
    ...(error.facts.reason === undefined ? {} : { reason: error.facts.reason }),
    ...(error.facts.limit === undefined ? {} : { limit: error.facts.limit }),
    ...(traceId === undefined ? {} : { traceId }),
  };
}

/** Fastify's own errors (body parsing, limits) carry `FST_ERR_*` codes and a status. */
function fastifyError(exception: unknown): AppError | undefined {
  const { code, statusCode, message } = (exception ?? {}) as {
    code?: unknown;
    statusCode?: unknown;
    message?: unknown;
  };
  if (typeof statusCode !== 'number') return undefined;
  const detail = typeof message === 'string' ? message : 'Bad request';
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.payloadTooLarge(detail);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType(undefined, [], detail);
    default:
      // Malformed JSON, prototype poisoning, a bad content-length: the client's request is unusable.
      return statusCode >= 400 && statusCode < 500
        ? Errors.validationFailed(detail, [{ property: 'body', messages: [detail] }])
        : undefined;
  }
}

function fromHttpException(exception: HttpException, request: FastifyRequest): AppError {
  const status: number = exception.getStatus();
  if (status === Number(HttpStatus.NOT_FOUND))
    return Errors.routeNotFound(request.method, request.url);
  if (status === Number(HttpStatus.PAYLOAD_TOO_LARGE))
    return Errors.payloadTooLarge(exception.message);
  if (status === Number(HttpStatus.UNSUPPORTED_MEDIA_TYPE))
    return Errors.unsupportedMediaType(undefined, [], exception.message);
  if (status >= 400 && status < 500) {
    return Errors.validationFailed(exception.message, [
      { property: 'request', messages: [exception.message] },
    ]);
  }
  return Errors.internal();
}
