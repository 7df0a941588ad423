/**
 * `@corepool/core`: CPU-heavy work on worker threads, admitted by deadline,
 * shared fairly, cancelled and recycled — with no web framework.
 *
 * @packageDocumentation
 * @module \@corepool/core
 */
export { POOL_DEFAULTS, type PoolOptions } from './workers/pool-options';
export { createPool, Pool } from './workers/pool';
export type { PoolHost, PoolLogger, PoolSettings } from './workers/pool-settings';
export {
  THREAD_REPLACE_CAUSES,
  type PoolStats,
  type RunOptions,
  type TaskResult,
  type TaskSettled,
  type TaskRef,
  type TaskStopKind,
  type TaskTimes,
  type ThreadCounts,
  type ThreadReplaceCause,
} from './workers/pool.types';
export type { TaskOutcome } from './workers/task-failure';
export type { TaskCaller } from './workers/scheduler-ticket';
export type { TaskProgress } from './workers/task-progress';
// Parts of PoolStats and ThreadReplaceCause above, so that code reading the stats can name them.
export type { Percentiles } from './workers/rolling-percentiles';
export type { RecycleCause } from './workers/thread-recycler';
export { Cancellation, onCancel, type CancelSignal } from './workers/cancellation';
export { maxQueueForMemory, MIN_WAITING_PER_THREAD } from './workers/queue-bound';

export {
  CorepoolError,
  Errors,
  type ErrorFacts,
  type FieldError,
  type SaturationReason,
} from './common/app-error';
export { ErrorCode } from './common/error-codes';

// The task contract, as a task module imports it (`@corepool/core/task`).
export * from './task';
export { TaskRegistry, loadTaskModule, type TaskModule } from './tasks/task-registry';

export { JOBS_CLIENT_KEY, SHARED_CLIENT_KEY } from './scheduler/client-keys';
export { REFUSAL_REASONS, type RefusalReason } from './scheduler/refusal';
export type { SchedulerState } from './scheduler/scheduler-types';
export type { KeyDepth, ServeOrder } from './scheduler/fair-queue';
