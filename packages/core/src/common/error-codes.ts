/**
 * Every code the pool and its tasks fail with. Callers, dashboards and alert
 * rules depend on these strings: add new ones, never rename one.
 */
export const ErrorCode = {
  /** The input does not match the task's schema (`facts.errors` lists the fields). */
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  /** No task of that name was loaded. */
  TASK_NOT_FOUND: 'TASK_NOT_FOUND',
  /** Refused before it ran, or shed while it waited (`facts.reason`, `retryAfterSeconds`). */
  POOL_SATURATED: 'POOL_SATURATED',
  /** The pool is closing: it takes no new task. */
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  /** The deadline passed, queued or running; the task was stopped and its thread kept. */
  TASK_TIMEOUT: 'TASK_TIMEOUT',
  /** The caller's signal aborted the task. */
  TASK_CANCELLED: 'TASK_CANCELLED',
  /** The task threw. */
  TASK_FAILED: 'TASK_FAILED',
  /** The thread died under the task; it was replaced. */
  WORKER_CRASHED: 'WORKER_CRASHED',
  /** The task passed its thread's heap or memory budget; the thread was replaced. */
  WORKER_OUT_OF_MEMORY: 'WORKER_OUT_OF_MEMORY',
  /** A task's input document is not what it claims, or is damaged (`TaskInputError`). */
  INVALID_DOCUMENT: 'INVALID_DOCUMENT',
  /** A task's input document needs a password (`TaskInputError`). */
  DOCUMENT_ENCRYPTED: 'DOCUMENT_ENCRYPTED',
  /** Something failed that should not have; the host logs it. */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
