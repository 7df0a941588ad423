/**
 * What a running task may use besides its input: given to `TaskDefinition.run`
 * as its third argument, in the thread that runs it. Plain data and
 * functions, no framework: threads load this file.
 */
export interface TaskContext {
  /**
   * Reports how far the task is: `fraction` from 0 to 1 and a short message
   * (e.g. "page 3 of 12"). Cheap to call often: reports are rate-limited on
   * the way out, the latest one wins. A no-op for synchronous requests.
   */
  progress(fraction: number, message?: string): void;
}

/** A context whose reports go nowhere: for callers that do not follow progress (and tests). */
export function silentContext(): TaskContext {
  return { progress: () => undefined };
}
