/**
 * The waiting tasks a pool holds at most, from the memory it may use: the
 * bound is a memory bound, never the admission rule (the scheduler admits by
 * time). A smaller bound made each newcomer of a patient crowd shed a waiting
 * task, and the refusals, retried at once, took the cores from the threads
 * (ADR 0020, ADR 0052).
 */

/** The least a pool holds per thread, however little memory it has. */
export const MIN_WAITING_PER_THREAD = 128;

/**
 * What one waiting task holds besides its body (request and reply objects,
 * its input, the scheduler's entry), rounded up from what a crowd of waiting
 * tiny tasks measured, and the share of a process's memory that waiting
 * tasks may hold.
 */
export const WAITING_TASK_BYTES = 16 * 1024;
export const WAITING_TASKS_MEMORY_SHARE = 1 / 16;
const MAX_QUEUE_CEILING = 1_000_000;

/** The waiting tasks that a process's share of memory holds, at least `MIN_WAITING_PER_THREAD` per thread. */
export function maxQueueForMemory(processMemoryBytes: number, threads: number): number {
  const byMemory = Math.floor(
    (processMemoryBytes * WAITING_TASKS_MEMORY_SHARE) / WAITING_TASK_BYTES,
  );
  const floor = Math.max(1, threads) * MIN_WAITING_PER_THREAD;
  return Math.min(MAX_QUEUE_CEILING, Math.max(floor, byMemory));
}
