import { ErrorCode } from './error-codes';

/** One field that failed validation, as listed in a problem's `errors`. */
export interface FieldError {
  readonly property: string;
  readonly messages: readonly string[];
}

/**
 * What the core knows about an error besides its code and detail. Facts, not
 * HTTP: the edge's error table decides what they become (`Retry-After`, …).
 */
export interface ErrorFacts {
  /** The fields that failed validation. */
  readonly errors?: readonly FieldError[];
  /** How many fields failed validation; `errors` lists at most the first few of them. */
  readonly errorCount?: number;
  /** When a retry is likely to be accepted, in whole seconds. */
  readonly retryAfterSeconds?: number;
  /** The bound that was passed (bytes, jobs, milliseconds, megabytes). */
  readonly limit?: number;
  /** Why a task was refused or shed: `deadline`, `too-long`, `queue-delay`, `backstop` or `memory`. */
  readonly reason?: string;
  /** The content codings a body may use, when its own was refused (`Accept-Encoding`). */
  readonly acceptedEncodings?: readonly string[];
}

/**
 * An error with a stable code, a human detail and typed facts. The core raises
 * these and never names an HTTP status: `src/http/error-table.ts` maps each
 * code to its status, title and headers, in one place.
 */
export class AppError extends Error {
  override readonly name = 'AppError';

  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly facts: ErrorFacts = {},
  ) {
    super(detail);
  }

  /** The human explanation of this occurrence (the problem's `detail`). */
  get detail(): string {
    return this.message;
  }
}

/**
 * The job queue has no estimate of when a slot frees up (jobs run for minutes
 * or milliseconds); a few seconds spreads retries without making clients idle.
 */
const JOB_RETRY_AFTER_SECONDS = 5;

/** What a POOL_SATURATED refusal says, by reason. */
const SATURATION_DETAIL = {
  deadline: 'The task cannot finish before its deadline: the work queued ahead of it is too long',
  'too-long':
    'The task cannot finish before its deadline: its own run time is longer than the time left',
  'queue-delay':
    'The pool is overloaded: tasks are shed when they wait longer than the target delay',
  backstop: 'The task queue is full',
  memory: 'The request bodies this process holds already fill its memory budget',
} as const;

/** One factory per code, so each code always carries the same facts and wording. */
export const Errors = {
  validationFailed: (
    detail: string,
    errors: readonly FieldError[] = [],
    errorCount: number = errors.length,
  ) => new AppError(ErrorCode.VALIDATION_FAILED, detail, { errors, errorCount }),
  routeNotFound: (method: string, url: string) =>
    new AppError(ErrorCode.ROUTE_NOT_FOUND, `No route for ${method} ${url}`),
  taskNotFound: (name: string) =>
    new AppError(ErrorCode.TASK_NOT_FOUND, `No task named '${name}'; GET /api/tasks lists them`),
  jobNotFound: (id: string) => new AppError(ErrorCode.JOB_NOT_FOUND, `No job with id '${id}'`),
  payloadTooLarge: (limit: number | string) =>
    typeof limit === 'number'
      ? new AppError(
          ErrorCode.PAYLOAD_TOO_LARGE,
          `The body is larger than the limit of ${limit} bytes`,
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
  /** `estimate`: the figures behind the refusal ("about 1.8 s of work ahead of it …"), where known. */
  poolSaturated: (
    retryAfterSeconds: number,
    reason: keyof typeof SATURATION_DETAIL = 'backstop',
    estimate?: string,
  ) =>
    new AppError(
      ErrorCode.POOL_SATURATED,
      `${SATURATION_DETAIL[reason]}${estimate === undefined ? '' : ` (${estimate})`}; retry in about ${retryAfterSeconds} s`,
      { retryAfterSeconds, reason },
    ),
  /** A deadline header that is not a whole number of milliseconds in range. */
  invalidDeadline: (header: string, max: number) =>
    new AppError(
      ErrorCode.INVALID_DEADLINE,
      `${header} must be a whole number of milliseconds from 1 to ${max}`,
      { limit: max },
    ),
  shuttingDown: () =>
    new AppError(ErrorCode.SHUTTING_DOWN, 'This process is draining; retry on another'),
  taskTimeout: (timeoutMs: number) =>
    new AppError(
      ErrorCode.TASK_TIMEOUT,
      `The task passed its ${timeoutMs} ms deadline (queued or running); it was cancelled`,
      { limit: timeoutMs },
    ),
  /** The client went away; it never sees the answer. */
  taskCancelled: () =>
    new AppError(ErrorCode.TASK_CANCELLED, 'The client closed the request; the task was cancelled'),
  taskFailed: (message: string) => new AppError(ErrorCode.TASK_FAILED, message),
  workerCrashed: (detail: string) =>
    new AppError(ErrorCode.WORKER_CRASHED, `The worker thread died (${detail}); it was replaced`),
  workerOutOfMemory: (limitMb: number | undefined) =>
    new AppError(
      ErrorCode.WORKER_OUT_OF_MEMORY,
      `The task exhausted its thread's heap${limitMb === undefined ? '' : ` of ${limitMb} MB`}; the thread was replaced`,
      limitMb === undefined ? {} : { limit: limitMb },
    ),
  /** The thread's heap and buffers passed `WORKER_MAX_MEMORY_MB` while the task ran. */
  workerOverMemoryBudget: (limitMb: number) =>
    new AppError(
      ErrorCode.WORKER_OUT_OF_MEMORY,
      `The task passed its thread's memory budget of ${limitMb} MB (heap and buffers); the thread was replaced`,
      { limit: limitMb },
    ),
  metricsUnavailable: (detail: string) => new AppError(ErrorCode.METRICS_UNAVAILABLE, detail),
  /** The uploaded document is not what its content type claims, or is damaged. */
  invalidDocument: (detail: string) => new AppError(ErrorCode.INVALID_DOCUMENT, detail),
  /** The document needs a password to be read. */
  documentEncrypted: (detail: string) => new AppError(ErrorCode.DOCUMENT_ENCRYPTED, detail),
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
  internal: () =>
    new AppError(ErrorCode.INTERNAL_ERROR, 'An unexpected error occurred; it has been logged'),
} as const;
