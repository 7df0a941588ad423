import type { AppError, ErrorFacts } from '../common/app-error';
import type { ErrorCode } from '../common/error-codes';

/** How one error code is answered over HTTP. */
export interface HttpErrorMapping {
  readonly status: number;
  readonly title: string;
  /** Headers that belong to the code, besides `Retry-After` (from the facts, for every code). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The one table where codes become HTTP. The core raises `AppError`s with a
 * code and facts; the problem-details filter, Fastify's framework and client
 * error handlers and the job views all read status and title from here.
 * `satisfies Record<ErrorCode, …>`: a new code without a row does not compile.
 */
export const ERROR_TABLE = {
  VALIDATION_FAILED: { status: 400, title: 'Validation failed' },
  INVALID_DEADLINE: { status: 400, title: 'Invalid deadline' },
  ROUTE_NOT_FOUND: { status: 404, title: 'Route not found' },
  TASK_NOT_FOUND: { status: 404, title: 'Task not found' },
  JOB_NOT_FOUND: { status: 404, title: 'Job not found' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request timeout' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large' },
  POOL_SATURATED: { status: 503, title: 'Pool saturated' },
  // A draining process asks the client to take its next request elsewhere.
  SHUTTING_DOWN: { status: 503, title: 'Shutting down', headers: { connection: 'close' } },
  TASK_TIMEOUT: { status: 504, title: 'Task timed out' },
  // 499, as nginx logs it: the client went away and never sees this answer.
  TASK_CANCELLED: { status: 499, title: 'Task cancelled' },
  TASK_FAILED: { status: 500, title: 'Task failed' },
  WORKER_CRASHED: { status: 500, title: 'Worker crashed' },
  WORKER_OUT_OF_MEMORY: { status: 500, title: 'Worker out of memory' },
  METRICS_UNAVAILABLE: { status: 503, title: 'Metrics unavailable' },
  INVALID_DOCUMENT: { status: 422, title: 'Invalid document' },
  DOCUMENT_ENCRYPTED: { status: 422, title: 'Document encrypted' },
  JOB_QUEUE_FULL: { status: 503, title: 'Job queue full' },
  QUEUE_UNAVAILABLE: { status: 503, title: 'Queue unavailable' },
  // RFC 6750's challenge: both API keys and tokens may come as `Authorization: Bearer`.
  UNAUTHENTICATED: {
    status: 401,
    title: 'Unauthenticated',
    headers: { 'www-authenticate': 'Bearer realm="corepool"' },
  },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  RATE_LIMITED: { status: 429, title: 'Rate limited' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  OFFSET_NOT_SUPPORTED: { status: 400, title: 'Offset not supported' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
} as const satisfies Record<ErrorCode, HttpErrorMapping>;

const ROWS: Readonly<Record<string, HttpErrorMapping | undefined>> = ERROR_TABLE;

/** Status and title of a code; a code this version does not know (an old stored job's) is an internal error. */
export function httpOf(code: string): HttpErrorMapping {
  return ROWS[code] ?? ERROR_TABLE.INTERNAL_ERROR;
}

/**
 * The response headers of an error: the code's own, `Retry-After` when the core estimated
 * one, and `Accept-Encoding` when a body's content coding was refused.
 */
export function headersOf(error: AppError): Record<string, string> {
  const mapping = httpOf(error.code);
  return { ...mapping.headers, ...retryAfter(error.facts), ...acceptEncoding(error.facts) };
}

function acceptEncoding({ acceptedEncodings }: ErrorFacts): Record<string, string> {
  return acceptedEncodings === undefined ? {} : { 'accept-encoding': acceptedEncodings.join(', ') };
}

function retryAfter({ retryAfterSeconds }: ErrorFacts): Record<string, string> {
  return retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
}
