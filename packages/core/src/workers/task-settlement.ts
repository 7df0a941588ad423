import type { PoolLogger } from './pool-settings';
import type { CorepoolError } from '../common/app-error';
import type { ClassifiedFailure, TaskOutcome } from './task-failure';
import type { TaskRef, TaskSettled, TaskTimes } from './pool.types';

/**
 * How every task ends, whatever its outcome: its trace is closed, the
 * `onSettled` listeners hear of it (metrics, the task log), and a failure
 * nobody expected is logged with the request's id and trace.
 */
export class TaskSettlement {
  constructor(
    private readonly logger: PoolLogger,
    private readonly emit: (settled: TaskSettled) => void,
  ) {}

  /** A classified failure; returns its error, for the caller to throw. */
  failed(ref: TaskRef, failure: ClassifiedFailure, timing?: TaskTimes): CorepoolError {
    if (failure.unexpected) {
      const trace = ref.trace?.parent;
      this.logger.error(
        { reqId: ref.requestId, trace_id: trace?.traceId, span_id: trace?.spanId },
        `Task '${ref.task}': ${failure.error.detail}`,
      );
    }
    return this.settle(ref, failure.outcome, failure.error, timing);
  }

  /** Returns `error` (undefined for a success), for the caller to throw. */
  settle(
    ref: TaskRef,
    outcome: TaskOutcome,
    error?: CorepoolError,
    timing?: TaskTimes,
  ): CorepoolError {
    ref.trace?.settled(outcome, error);
    const { task, requestId, trace } = ref;
    const settled: TaskSettled = {
      task,
      requestId,
      outcome,
      error,
      ...timing,
      ...(trace === undefined
        ? {}
        : { traceId: trace.parent.traceId, spanId: trace.parent.spanId }),
    };
    this.emit(settled);
    return error as CorepoolError;
  }
}
