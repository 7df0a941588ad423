/**
 * What a running task gets besides its input, as the third argument of
 * `TaskDefinition.run`, in the thread that runs it: a way to notice that
 * nobody wants its result any more (the client left, the deadline passed,
 * the job was cancelled, the process is shutting down), and a way to say how
 * far it is. Plain data and functions, no framework: threads load this file.
 *
 * A task that checks its cancellation stops on its own and its thread lives
 * on; one that does not is terminated once `CANCEL_GRACE_MS` has passed, and
 * its thread is replaced. Either way the client gets the same error code.
 */
export interface TaskContext {
  /**
   * Aborts when the task is cancelled, for asynchronous code (pass it to
   * APIs that accept a signal, or listen to it). It is already aborted
   * when the task was cancelled before reading it, and a listener added
   * then is never called: check `signal.aborted` first. Synchronous code
   * never sees it fire: poll `throwIfCancelled()` instead.
   */
  readonly signal: AbortSignal;
  /**
   * Throws a `TaskCancelledError` once the task is cancelled. Cheap (one
   * atomic read of memory the main thread writes): call it every few
   * milliseconds of work in a long loop.
   */
  throwIfCancelled(): void;
  /**
   * Reports how far the task is: `fraction` from 0 to 1 and a short message
   * (e.g. "page 3 of 12"). Cheap to call often: reports are rate-limited on
   * the way out, the latest one wins. A no-op when nobody follows the task's
   * progress (synchronous requests).
   */
  progress(fraction: number, message?: string): void;
  /**
   * Adds an event to the task's run span (OpenTelemetry), e.g. "pages parsed". A no-op
   * when the request is not traced; cheap either way.
   */
  addEvent(name: string, attributes?: SpanAttributes): void;
  /**
   * Starts a child span of the task's run span, recorded on this thread; call `end()`
   * when the step is done (a span left open ends with the task). When the request is
   * not traced, the span does nothing.
   */
  startSpan(name: string, attributes?: SpanAttributes): TaskSpan;
}

/** Span and event attributes: OpenTelemetry's names where one exists, else the task's own. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** A child span a task started (`TaskContext.startSpan`). */
export interface TaskSpan {
  setAttribute(key: string, value: string | number | boolean): void;
  addEvent(name: string, attributes?: SpanAttributes): void;
  /** Ends the span; with an error, it has an error status and the error's name as `error.type`. */
  end(error?: unknown): void;
}

/**
 * Thrown by `throwIfCancelled()` (and the `signal`'s reason). A task may let
 * it through or throw it itself; the pool answers with the cancellation's
 * own code (TASK_TIMEOUT, TASK_CANCELLED, SHUTTING_DOWN), never TASK_FAILED.
 */
export class TaskCancelledError extends Error {
  override readonly name = 'TaskCancelledError';

  constructor() {
    super('the task was cancelled');
  }
}
