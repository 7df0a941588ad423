import { SHARED_CLIENT_KEY } from '../scheduler/client-keys';
import type { SchedulerOptions, Ticket } from '../scheduler/task-scheduler';
import type { PoolSettings } from './pool-settings';

/** What a caller tells the pool about who asks and how long it waits. */
export interface TaskCaller {
  /** Whose fair share the task counts in (a tenant, a user); absent: the one shared key. */
  readonly client?: string;
  /** The caller's own deadline in ms from arrival; the pool's `taskTimeoutMs` caps it. */
  readonly deadlineMs?: number;
}

/**
 * The seam between the pool and its scheduler (`src/scheduler/`): the pool
 * hands every task over as a ticket, and the scheduler admits, orders,
 * shares and sheds. The effective deadline is the earliest of the client's
 * own and the pool's `taskTimeoutMs`, both counted from the request's arrival.
 */
export function ticketFor(
  task: string,
  size: number,
  request: TaskCaller,
  arrivedAt: number,
  taskTimeoutMs: number,
  costClass?: string,
): { ticket: Ticket; timeoutMs: number } {
  const timeoutMs = Math.min(taskTimeoutMs, request.deadlineMs ?? Infinity);
  return {
    ticket: {
      task,
      size,
      costClass,
      key: request.client ?? SHARED_CLIENT_KEY,
      deadlineAt: arrivedAt + timeoutMs,
      clientDeadline: request.deadlineMs !== undefined,
    },
    timeoutMs,
  };
}

/** The scheduler's options from the pool's settings. */
export function schedulerOptions(
  config: PoolSettings,
  onDelay: (delayMs: number) => void,
): SchedulerOptions {
  const { pool, scheduler } = config;
  return {
    slots: Math.max(1, pool.threads),
    maxQueue: pool.maxQueue,
    targetDelayMs: scheduler.targetDelayMs,
    intervalMs: scheduler.intervalMs,
    costPriorMs: scheduler.costPriorMs,
    jobsMaxThreads: scheduler.jobsMaxThreads,
    maxRetryAfterSeconds: Math.max(1, Math.ceil(pool.taskTimeoutMs / 1000)),
    onDelay,
  };
}
