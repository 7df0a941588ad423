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
 * An error with a stable code, a human detail and typed facts. The pool and
 * its tasks raise these and never name an HTTP status: the host maps each code
 * to its answer in one place (the Nest module's filter, the service's error
 * table). `Code` widens for a host that adds codes of its own.
 */
export class CorepoolError<Code extends string = ErrorCode> extends Error {
  override readonly name = 'CorepoolError';

  constructor(
    readonly code: Code,
    detail: string,
    readonly facts: ErrorFacts = {},
  ) {
    super(detail);
  }

  /** The human explanation of this occurrence (a problem's `detail`). */
  get detail(): string {
    return this.message;
  }

  /** When a retry is likely to be accepted, in whole seconds (`POOL_SATURATED`). */
  get retryAfterSeconds(): number | undefined {
    return this.facts.retryAfterSeconds;
  }
}

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
  ) => new CorepoolError(ErrorCode.VALIDATION_FAILED, detail, { errors, errorCount }),
  taskNotFound: (name: string) =>
    new CorepoolError(ErrorCode.TASK_NOT_FOUND, `No task named '${name}'`),
  /** `estimate`: the figures behind the refusal ("about 1.8 s of work ahead of it …"), where known. */
  poolSaturated: (
    retryAfterSeconds: number,
    reason: keyof typeof SATURATION_DETAIL = 'backstop',
    estimate?: string,
  ) =>
    new CorepoolError(
      ErrorCode.POOL_SATURATED,
      `${SATURATION_DETAIL[reason]}${estimate === undefined ? '' : ` (${estimate})`}; retry in about ${retryAfterSeconds} s`,
      { retryAfterSeconds, reason },
    ),
  shuttingDown: () =>
    new CorepoolError(ErrorCode.SHUTTING_DOWN, 'This process is draining; retry on another'),
  taskTimeout: (timeoutMs: number) =>
    new CorepoolError(
      ErrorCode.TASK_TIMEOUT,
      `The task passed its ${timeoutMs} ms deadline (queued or running); it was cancelled`,
      { limit: timeoutMs },
    ),
  /** The client went away; it never sees the answer. */
  taskCancelled: () =>
    new CorepoolError(
      ErrorCode.TASK_CANCELLED,
      'The client closed the request; the task was cancelled',
    ),
  taskFailed: (message: string) => new CorepoolError(ErrorCode.TASK_FAILED, message),
  workerCrashed: (detail: string) =>
    new CorepoolError(
      ErrorCode.WORKER_CRASHED,
      `The worker thread died (${detail}); it was replaced`,
    ),
  workerOutOfMemory: (limitMb: number) =>
    new CorepoolError(
      ErrorCode.WORKER_OUT_OF_MEMORY,
      `The task exhausted its thread's heap of ${limitMb} MB; the thread was replaced`,
      { limit: limitMb },
    ),
  /** The thread's heap and buffers passed `WORKER_MAX_MEMORY_MB` while the task ran. */
  workerOverMemoryBudget: (limitMb: number) =>
    new CorepoolError(
      ErrorCode.WORKER_OUT_OF_MEMORY,
      `The task passed its thread's memory budget of ${limitMb} MB (heap and buffers); the thread was replaced`,
      { limit: limitMb },
    ),
  /** The uploaded document is not what its content type claims, or is damaged. */
  invalidDocument: (detail: string) => new CorepoolError(ErrorCode.INVALID_DOCUMENT, detail),
  /** The document needs a password to be read. */
  documentEncrypted: (detail: string) => new CorepoolError(ErrorCode.DOCUMENT_ENCRYPTED, detail),
  internal: () =>
    new CorepoolError(ErrorCode.INTERNAL_ERROR, 'An unexpected error occurred; it has been logged'),
} as const;

export type SaturationReason = keyof typeof SATURATION_DETAIL;
