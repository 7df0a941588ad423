/**
 * Thrown by a task's `run` when the input passed validation on the main thread
 * but turns out to be unusable once the thread looks inside it (a raw JSON body
 * that does not parse, a document that is not what it claims). The pool answers
 * it as the client's mistake (400 VALIDATION_FAILED), not as a task failure.
 */
export class TaskInputError extends Error {
  override readonly name = 'TaskInputError';

  constructor(
    message: string,
    /** Where in the input the problem is, e.g. `body` or `body[3].price`. */
    readonly property = 'body',
  ) {
    super(message);
  }
}
