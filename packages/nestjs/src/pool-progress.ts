import { performance } from 'node:perf_hooks';

/**
 * Whether a pool with tasks waiting still moves: it does as long as tasks
 * finish, since each finished task frees a thread for the next waiting one.
 * Sampled when asked (a probe, a scrape of the details), from the pool's
 * count of finished tasks, so the hot path pays nothing; a stall is counted
 * from the first sample that saw it, so it is reported late by up to one
 * probe interval, never early.
 */
export class PoolProgress {
  private lastCompleted = -1;
  private stalledSince: number | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** How long tasks have waited with none finished (ms), 0 when none waits or one just finished. */
  stalledMs(queueSize: number, completed: number): number {
    const now = this.now();
    if (queueSize === 0 || completed !== this.lastCompleted) {
      this.lastCompleted = completed;
      this.stalledSince = queueSize === 0 ? undefined : now;
      return 0;
    }
    this.stalledSince ??= now;
    return now - this.stalledSince;
  }
}
