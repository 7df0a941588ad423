import { ErrorCode } from './error-codes';

/** One field that failed validation, as listed in a problem's `errors`. */
export interface FieldError {
  readonly property: string;
  readonly messages: readonly string[];
}

/**
 * An error with a stable code, an HTTP status and a human title. The exception
 * filter turns it into `application/problem+json`; nothing else decides status codes.
 */
export class AppError extends Error {
  override readonly name = 'AppError';

  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly extras: {
      readonly errors?: readonly FieldError[];
      /** Response headers that belong to the error, e.g. `Retry-After`. */
      readonly headers?: Readonly<Record<string, string>>;
    } = {},
  ) {
    super(detail);
  }
}

/** The table of errors: one factory per code, so a code always has the same status and title. */
export const Errors = {
  validationFailed: (detail: string, errors: readonly FieldError[] = []) =>
    new AppError(ErrorCode.VALIDATION_FAILED, 400, 'Validation failed', detail, { errors }),
  routeNotFound: (method: string, url: string) =>
    new AppError(
      ErrorCode.ROUTE_NOT_FOUND,
      404,
      'Route not found',
      `No route for ${method} ${url}`,
    ),
  taskNotFound: (name: string) =>
    new AppError(
      ErrorCode.TASK_NOT_FOUND,
      404,
      'Task not found',
      `No task named '${name}'; GET /api/tasks lists them`,
    ),
  jobNotFound: (id: string) =>
    new AppError(ErrorCode.JOB_NOT_FOUND, 404, 'Job not found', `No job with id '${id}'`),
  payloadTooLarge: (limit: number | string) =>
    new AppError(
      ErrorCode.PAYLOAD_TOO_LARGE,
      413,
      'Payload too large',
      typeof limit === 'number' ? `The body is larger than the limit of ${limit} bytes` : limit,
    ),
  unsupportedMediaType: (got: string | undefined, accepted: readonly string[], detail?: string) =>
    new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      415,
      'Unsupported media type',
      detail ??
        `Content-Type ${got === undefined ? '(none)' : `'${got}'`} is not accepted here; send ${accepted.join(' or ')}`,
    ),
  /** The client did not send its headers, or its whole request, within the configured time. */
  requestTimeout: () =>
    new AppError(
      ErrorCode.REQUEST_TIMEOUT,
      408,
      'Request timeout',
      'The request was not received in time; the connection is closed',
    ),
  headersTooLarge: () =>
    new AppError(
      ErrorCode.HEADERS_TOO_LARGE,
      431,
      'Request header fields too large',
      'The request headers exceed the server limit',
    ),
  poolSaturated: (retryAfterSeconds: number) =>
    new AppError(
      ErrorCode.POOL_SATURATED,
      503,
      'Pool saturated',
      `The task queue is full; retry in about ${retryAfterSeconds} s`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  shuttingDown: () =>
    new AppError(
      ErrorCode.SHUTTING_DOWN,
      503,
      'Shutting down',
      'This process is draining; retry on another',
      {
        headers: { connection: 'close' },
      },
    ),
  taskTimeout: (timeoutMs: number) =>
    new AppError(
      ErrorCode.TASK_TIMEOUT,
      504,
      'Task timed out',
      `The task passed its ${timeoutMs} ms deadline (queued or running); it was cancelled`,
    ),
  /** The client went away; 499 (as nginx logs it) is never seen by that client. */
  taskCancelled: () =>
    new AppError(
      ErrorCode.TASK_CANCELLED,
      499,
      'Task cancelled',
      'The client closed the request; the task was cancelled',
    ),
  taskFailed: (message: string) => new AppError(ErrorCode.TASK_FAILED, 500, 'Task failed', message),
  workerCrashed: (detail: string) =>
    new AppError(
      ErrorCode.WORKER_CRASHED,
      500,
      'Worker crashed',
      `The worker thread died (${detail}); it was replaced`,
    ),
  workerOutOfMemory: (limitMb: number | undefined) =>
    new AppError(
      ErrorCode.WORKER_OUT_OF_MEMORY,
      500,
      'Worker out of memory',
      `The task exhausted its thread's heap${limitMb === undefined ? '' : ` of ${limitMb} MB`}; the thread was replaced`,
    ),
  metricsUnavailable: (detail: string) =>
    new AppError(ErrorCode.METRICS_UNAVAILABLE, 503, 'Metrics unavailable', detail),
  /** The uploaded document is not what its content type claims, or is damaged. */
  invalidDocument: (detail: string) =>
    new AppError(ErrorCode.INVALID_DOCUMENT, 422, 'Invalid document', detail),
  /** The document needs a password to be read. */
  documentEncrypted: (detail: string) =>
    new AppError(ErrorCode.DOCUMENT_ENCRYPTED, 422, 'Document encrypted', detail),
  jobQueueFull: (limit: number) =>
    new AppError(
      ErrorCode.JOB_QUEUE_FULL,
      503,
      'Job queue full',
      `${limit} jobs are queued or running in this process; retry later`,
      { headers: { 'retry-after': '5' } },
    ),
  /** Redis (the BullMQ backend) cannot be reached; nothing was queued. */
  queueUnavailable: (detail: string) =>
    new AppError(
      ErrorCode.QUEUE_UNAVAILABLE,
      503,
      'Queue unavailable',
      `The job queue cannot be reached (${detail}); nothing was queued, retry later`,
      { headers: { 'retry-after': '5' } },
    ),
  internal: () =>
    new AppError(
      ErrorCode.INTERNAL_ERROR,
      500,
      'Internal error',
      'An unexpected error occurred; it has been logged',
    ),
} as const;
