import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CorepoolError, ErrorCode } from '@corepool/core';

/** The HTTP status of each of the core's codes; the module's `errorStatus` overrides any of them. */
export const DEFAULT_ERROR_STATUS: Readonly<Record<string, number>> = {
  [ErrorCode.VALIDATION_FAILED]: 400,
  [ErrorCode.INVALID_DOCUMENT]: 400,
  [ErrorCode.DOCUMENT_ENCRYPTED]: 422,
  [ErrorCode.TASK_NOT_FOUND]: 404,
  [ErrorCode.POOL_SATURATED]: 503,
  [ErrorCode.SHUTTING_DOWN]: 503,
  [ErrorCode.TASK_TIMEOUT]: 504,
  // The client left: nobody reads the answer; 499 is what proxies log for it.
  [ErrorCode.TASK_CANCELLED]: 499,
  [ErrorCode.TASK_FAILED]: 500,
  [ErrorCode.WORKER_CRASHED]: 500,
  [ErrorCode.WORKER_OUT_OF_MEMORY]: 500,
  [ErrorCode.INTERNAL_ERROR]: 500,
};

/** Answers for a draining process: a retry goes to another one. */
const SHUTTING_DOWN_RETRY_AFTER_SECONDS = 1;

/**
 * Answers the pool's errors (`CorepoolError`) over HTTP as RFC 9457 problem
 * details — `{ type, title, status, detail, code, … }` — with `Retry-After`
 * on a refusal, on Express or Fastify alike. Other exceptions are not caught:
 * Nest's own filter answers them as before.
 */
@Catch(CorepoolError)
export class CorepoolExceptionFilter implements ExceptionFilter<CorepoolError> {
  private readonly status: Readonly<Record<string, number>>;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    errorStatus: Readonly<Record<string, number>> = {},
  ) {
    this.status = { ...DEFAULT_ERROR_STATUS, ...errorStatus };
  }

  catch(error: CorepoolError, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const adapter = this.adapterHost.httpAdapter;
    const response: unknown = http.getResponse();
    const status = this.status[error.code] ?? 500;
    const retryAfter =
      error.retryAfterSeconds ??
      (error.code === ErrorCode.SHUTTING_DOWN ? SHUTTING_DOWN_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) adapter.setHeader(response, 'Retry-After', String(retryAfter));
    adapter.setHeader(response, 'Content-Type', 'application/problem+json');
    const { errors, reason } = error.facts;
    adapter.reply(
      response,
      {
        type: 'about:blank',
        title: titleOf(error.code),
        status,
        detail: error.detail,
        code: error.code,
        ...(reason === undefined ? {} : { reason }),
        ...(errors === undefined ? {} : { errors }),
      },
      status,
    );
  }
}

/** `POOL_SATURATED` → `Pool saturated`. */
const titleOf = (code: string) => code.charAt(0) + code.slice(1).toLowerCase().replaceAll('_', ' ');
