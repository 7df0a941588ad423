import type { CorepoolError } from '../common/app-error';
import type { CostEstimate } from './cost-model';
import type { QueuedHandle } from './fair-queue';
import type { BatchSink, Ticket } from './scheduler-types';

/** One task waiting: in its key's line, rescued to the front of it, or gone (started, cancelled, shed). */
export interface Waiting {
  readonly key: string;
  /** The estimate's best guess and floor (ms), as the fair queue weighs them. */
  cost: number;
  floorMs: number;
  estimate: CostEstimate;
  /** The cost model's version the estimate was made at. */
  version: number;
  readonly ticket: Ticket;
  readonly enqueuedAt: number;
  /** May share a thread's message with other tasks (`SchedulerOptions.batch`). */
  readonly batchable: boolean;
  /** Hands the task to its thread, alone or into `batch`; settles the caller's promise. */
  readonly begin: (
    batch: BatchSink | undefined,
    settled: (completed: boolean, threadMs?: number) => void,
  ) => void;
  readonly fail: (error: CorepoolError) => void;
  place: 'line' | 'rescue' | 'gone';
  handle?: QueuedHandle;
  /** Moves the task ahead in its key, then sheds it when it can no longer start in time. */
  timer?: NodeJS.Timeout;
}

/**
 * The time a task that waited must still have to start: nine runs in ten of
 * its measured size end within it; where its size was not measured enough,
 * the least its runs so far took, and nothing where none was measured, so
 * that a guess never sheds it.
 */
export function neededToStart(estimate: CostEstimate): number {
  return estimate.sure ? estimate.highMs : estimate.seenMs;
}

/**
 * A task that waited starts only while the time it needs (`neededToStart`)
 * still fits before its deadline: started later, it would most likely end
 * in a 504 after holding a thread for the rest of its deadline.
 */
export function lateToStart(waiting: Waiting, now: number): boolean {
  const needMs = neededToStart(waiting.estimate);
  return needMs > 0 && now + needMs >= waiting.ticket.deadlineAt;
}

/** A task on a thread, for the estimate of when threads free up. */
export interface Running {
  /** The tasks it carries: one, or a batch. */
  readonly members: readonly Waiting[];
  readonly startedAt: number;
}

/** Calls a task's `start`; a `start` that throws is a rejection. */
export function startTask<T>(
  start: (batch?: BatchSink) => Promise<T>,
  batch: BatchSink | undefined,
): Promise<T> {
  try {
    return start(batch);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** How a task cancelled while it waits rejects: the same name as Piscina's abort. */
export function abortError(): Error {
  return Object.assign(new Error('The task was cancelled while queued'), { name: 'AbortError' });
}

/** What a cancellable caller hands in: a standard AbortSignal or the pool's Cancellation. */
export interface Abortable {
  readonly aborted: boolean;
}
export type CancelFollower = (signal: Abortable, listener: () => void) => () => void;
