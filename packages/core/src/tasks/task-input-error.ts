/**
 * What a task may say about unusable input, besides plain `VALIDATION_FAILED`
 * (400): a document that is damaged or not what it claims (422
 * `INVALID_DOCUMENT`), or one that needs a password (422 `DOCUMENT_ENCRYPTED`).
 * Plain strings, so task files (loaded by threads) import nothing from the web layer.
 */
export type TaskInputCode = 'VALIDATION_FAILED' | 'INVALID_DOCUMENT' | 'DOCUMENT_ENCRYPTED';

/**
 * Thrown by a task's `run` when the input passed validation on the main thread
 * but turns out to be unusable once the thread looks inside it (a raw JSON body
 * that does not parse, a document that is not what it claims). The pool answers
 * it as the client's mistake (a 4xx with `code`), not as a task failure.
 */
export class TaskInputError extends Error {
  override readonly name = 'TaskInputError';

  constructor(
    message: string,
    /** Where in the input the problem is, e.g. `body` or `body[3].price`. */
    readonly property = 'body',
    /** The stable error code the client gets; `VALIDATION_FAILED` (400) unless said otherwise. */
    readonly code: TaskInputCode = 'VALIDATION_FAILED',
  ) {
    super(message);
  }

  /**
   * Whether `error` is a TaskInputError, also when it comes from another copy
   * of this file: the threads run a bundle of the task code (ADR 0019), and a
   * module of `TASK_MODULES` that imports this class from dist/ gets the
   * separate file, whose class `instanceof` would not recognise.
   */
  static is(error: unknown): error is TaskInputError {
    return (
      error instanceof TaskInputError ||
      (error instanceof Error && error.name === 'TaskInputError' && 'code' in error)
    );
  }
}
