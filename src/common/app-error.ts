import { CorepoolError, Errors as CoreErrors } from '@corepool/core';
import { ErrorCode } from './error-codes';

export type { ErrorFacts, FieldError } from '@corepool/core';

/**
 * The service's errors are the engine's class (`CorepoolError`), with the
 * codes of the HTTP edge, the jobs and authentication added
 * (`error-codes.ts`): one class, so one table at the edge
 * (`src/http/error-table.ts`) maps every code to its status, title and headers.
 */
export const AppError = CorepoolError as new (
  code: ErrorCode,
  detail: string,
  facts?: CorepoolError['facts'],
) => AppError;
export type AppError = CorepoolError<ErrorCode>;

/**
 * The job queue has no estimate of when a slot frees up (jobs run for minutes
 * or milliseconds); a few seconds spreads retries without making clients idle.
 */
const JOB_RETRY_AFTER_SECONDS = 5;

/** One factory per code: the engine's, and the service's own. */
export const Errors = {
  ...CoreErrors,
  routeNotFound: (method: string, url: string) =>
    new AppError(ErrorCode.ROUTE_NOT_FOUND, `No route for ${method} ${url}`),
  jobNotFound: (id: string) => new AppError(ErrorCode.JOB_NOT_FOUND, `No job with id '${id}'`),
  /** `limit` in bytes (or Fastify's own message); `detail` when an option set it, naming the option. */
  payloadTooLarge: (limit: number | string, detail?: string) =>
    typeof limit === 'number'
      ? new AppError(
          ErrorCode.PAYLOAD_TOO_LARGE,
          detail ?? `The body is larger than the limit of ${limit} bytes`,
          { limit },
        )
      : new AppError(ErrorCode.PAYLOAD_TOO_LARGE, limit),
  unsupportedMediaType: (got: string | undefined, accepted: readonly string[], detail?: string) =>
    new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      detail ??
        `Content-Type ${got === undefined ? '(none)' : `'${got}'`} is not accepted here; send ${accepted.join(' or ')}`,
    ),
  /** A body in a content coding this service does not decode (RFC 9110 §15.5.16). */
  unsupportedContentEncoding: (got: string, accepted: readonly string[]) =>
    new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `Content-Encoding '${got.slice(0, 64)}' is not accepted; send ${accepted.join(' or ')}, or no Content-Encoding`,
      { acceptedEncodings: accepted },
    ),
  /** The client did not send its headers, or its whole request, within the configured time. */
  requestTimeout: () =>
    new AppError(
      ErrorCode.REQUEST_TIMEOUT,
      'The request was not received in time; the connection is closed',
    ),
  headersTooLarge: () =>
    new AppError(ErrorCode.HEADERS_TOO_LARGE, 'The request headers exceed the server limit'),
  /** A deadline header that is not a whole number of milliseconds in range. */
  invalidDeadline: (header: string, max: number) =>
    new AppError(
      ErrorCode.INVALID_DEADLINE,
      `${header} must be a whole number of milliseconds from 1 to ${max}`,
      { limit: max },
    ),
  metricsUnavailable: (detail: string) => new AppError(ErrorCode.METRICS_UNAVAILABLE, detail),
  jobQueueFull: (limit: number) =>
    new AppError(
      ErrorCode.JOB_QUEUE_FULL,
      `The job store is full (at most ${limit} jobs, JOBS_MAX_STORED_BYTES bytes) with unfinished jobs; retry later`,
      { limit, retryAfterSeconds: JOB_RETRY_AFTER_SECONDS },
    ),
  /** The job store (Redis, or the SQLite file) cannot be reached; nothing was queued. */
  queueUnavailable: (detail: string) =>
    new AppError(
      ErrorCode.QUEUE_UNAVAILABLE,
      `The job queue cannot be reached (${detail}); nothing was queued, retry later`,
      { retryAfterSeconds: JOB_RETRY_AFTER_SECONDS },
    ),
  /** The same `Idempotency-Key` came with another body. */
  idempotencyKeyReused: (key: string, jobId: string) =>
    new AppError(
      ErrorCode.IDEMPOTENCY_KEY_REUSED,
      `Idempotency-Key '${key}' was used for job ${jobId} with another body; use a new key`,
    ),
  /** `GET /api/jobs?offset=`: pages are cursors (`links.next`), whose cost does not grow with depth. */
  offsetNotSupported: () =>
    new AppError(
      ErrorCode.OFFSET_NOT_SUPPORTED,
      'offset is not supported: follow links.next (a cursor) from the first page',
    ),
  /** No credentials, or ones not accepted; the detail never says whether a key exists. */
  unauthenticated: (reason?: string) =>
    new AppError(
      ErrorCode.UNAUTHENTICATED,
      reason === undefined
        ? 'Credentials are missing or not valid: send x-api-key or Authorization: Bearer'
        : `Credentials not accepted: ${reason}`,
    ),
  /** Authenticated, without the scope the route needs. */
  forbidden: (scope: string) =>
    new AppError(ErrorCode.FORBIDDEN, `This route needs the scope '${scope}'`),
  /** The client's quota (requests per second, or tasks in flight) is spent. */
  rateLimited: (what: string, limit: number, retryAfterSeconds: number) =>
    new AppError(
      ErrorCode.RATE_LIMITED,
      `Quota of ${limit} ${what} per client spent; retry in about ${retryAfterSeconds} s`,
      { limit, retryAfterSeconds },
    ),
  /** Every event stream this process may hold is open (`JOBS_EVENTS_MAX_STREAMS`). */
  streamsExhausted: (limit: number, retryAfterSeconds: number) =>
    new AppError(
      ErrorCode.RATE_LIMITED,
      `This process holds ${limit} event streams at most, all open; retry in about ${retryAfterSeconds} s, or poll GET /api/jobs/:id`,
      { limit, retryAfterSeconds },
    ),
  /** The task is not in this service's catalog: the engine's error, pointing at the catalog. */
  taskNotFound: (name: string) =>
    new AppError(ErrorCode.TASK_NOT_FOUND, `No task named '${name}'; GET /api/tasks lists them`),
} as const;
