/**
 * `@corepool/core/host`: the engine's parts a host builds on beyond running
 * tasks — the corepool service and the Nest module use them: validation on the
 * calling thread, the task tracer's hook, the thread entry's handlers and the
 * span records threads send back. Less stable than the main entry: a minor
 * version may change them (their API report, etc/core-host.api.md, lists them
 * apart from the main entry's).
 *
 * @packageDocumentation
 * @module \@corepool/core/host
 */
export * from './index';
export { compileInput, validateInput, MAX_REPORTED_ERRORS } from './common/validation';
export { IdleWaiter } from './common/idle-waiter';
export { INPUT_RULES } from './tasks/input-schema';
export {
  activeTaskTracer,
  useTaskTracer,
  type TaskTrace,
  type TaskTracer,
  type TraceParentSpan,
} from './workers/task-tracer';
export * from './workers/thread-trace';
export {
  lowerThreadPriority,
  threadPrioritySupported,
  LOWEST_PRIORITY,
} from './workers/thread-priority';
export { ownsWholeBuffer, prepareTransfer, TRANSFER_THRESHOLD_BYTES } from './workers/transfer';
export type {
  TaskRequest,
  TaskResponse,
  TaskTiming,
  TaskTraceParent,
} from './workers/task-message';
export * from './workers/cancel-flag';
export { PROGRESS_INTERVAL_MS } from './workers/task-progress';
export { refusal, type RefusalEstimate } from './scheduler/refusal';
export { TaskScheduler } from './scheduler/task-scheduler';
export type { Abortable, CancelFollower } from './scheduler/waiting';
export type {
  BatchOptions,
  BatchSink,
  SchedulerOptions,
  Ticket,
} from './scheduler/scheduler-types';
export { defaultThreadFile, threadEnv } from './workers/piscina-options';
export { threadHandlers, type ThreadData, type ThreadHandlers } from './workers/thread-handlers';
