import { Errors, type CorepoolError } from '../common/app-error';
import type { TaskInputCode } from '../tasks/task-input-error';
import type { TaskResponse } from './task-message';

/** Every way a task can end; the `outcome` label of `compute_tasks_total`. */
export type TaskOutcome = 'success' | 'failed' | 'timeout' | 'rejected' | 'cancelled' | 'crashed';

/**
 * Why the pool aborted a task: its deadline, its client, the shutdown budget,
 * or its thread's memory over the budget (`memory-watch.ts`).
 */
export type AbortReason = 'timeout' | 'cancelled' | 'shutdown' | 'memory';

/** A failed task, as its outcome and the coded error its caller gets. */
export interface ClassifiedFailure {
  readonly outcome: Exclude<TaskOutcome, 'success' | 'rejected'>;
  readonly error: CorepoolError;
  /** The thread itself died for a reason nobody asked for: worth an error log line. */
  readonly unexpected: boolean;
}

/** The bounds a failure's error names. */
export interface FailureLimits {
  readonly taskTimeoutMs: number;
  readonly maxOldGenerationMb: number;
  /** Heap and external memory a thread may use (`WORKER_MAX_MEMORY_MB`). */
  readonly maxMemoryMb: number;
}

/** A rejection from Piscina (or the dispatcher) for an aborted task; it carries no detail of its own. */
const isAbortError = (error: unknown) => error instanceof Error && error.name === 'AbortError';

/**
 * A thread's answer that is not a value: the task said its input was unusable
 * (the client's mistake, a 4xx code) or it threw (TASK_FAILED).
 */
export function classifyAnswer(response: Extract<TaskResponse, { ok: false }>): ClassifiedFailure {
  const error =
    response.kind === 'input' ? inputError(response) : Errors.taskFailed(response.message);
  return { outcome: 'failed', error, unexpected: false };
}

/**
 * A task the pool aborted, whether it stopped on its own or its thread was
 * terminated: the client gets the code of the reason, the same either way.
 */
export function classifyAbort(reason: AbortReason, limits: FailureLimits): ClassifiedFailure {
  switch (reason) {
    case 'timeout':
      return {
        outcome: 'timeout',
        error: Errors.taskTimeout(limits.taskTimeoutMs),
        unexpected: false,
      };
    case 'shutdown':
      return { outcome: 'cancelled', error: Errors.shuttingDown(), unexpected: false };
    case 'cancelled':
      return { outcome: 'cancelled', error: Errors.taskCancelled(), unexpected: false };
    case 'memory':
      return {
        outcome: 'crashed',
        error: Errors.workerOverMemoryBudget(limits.maxMemoryMb),
        unexpected: false,
      };
  }
}

/**
 * A rejected task: aborted by the pool (deadline, client gone, shutdown, memory), or
 * its thread died (heap exhausted, crash). `abortedFor` is the reason the pool
 * aborted it, if it did.
 */
export function classifyRejection(
  error: unknown,
  abortedFor: AbortReason | undefined,
  limits: FailureLimits,
): ClassifiedFailure {
  if (isAbortError(error) && abortedFor !== undefined) return classifyAbort(abortedFor, limits);
  if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return {
      outcome: 'crashed',
      error: Errors.workerOutOfMemory(limits.maxOldGenerationMb),
      unexpected: false,
    };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { outcome: 'crashed', error: Errors.workerCrashed(detail), unexpected: true };
}

/** A task's verdict on its input, as the coded error the client gets. */
function inputError(response: { message: string; property?: string; code?: TaskInputCode }) {
  switch (response.code) {
    case 'INVALID_DOCUMENT':
      return Errors.invalidDocument(response.message);
    case 'DOCUMENT_ENCRYPTED':
      return Errors.documentEncrypted(response.message);
    case undefined:
    case 'VALIDATION_FAILED':
      return Errors.validationFailed(response.message, [
        { property: response.property ?? 'body', messages: [response.message] },
      ]);
  }
}
