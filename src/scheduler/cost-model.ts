/** How fast the estimate follows new measurements (exponential moving average). */
const SMOOTHING = 0.3;

/**
 * What a task costs a thread, per task name: an exponential moving average of
 * its recent run times. Cold start: a task never measured is estimated at
 * the `priorMs` (optimistic: it is admitted, and its first run replaces the
 * prior). A task that was stopped (deadline, crash, client gone) ran at least
 * as long as it was measured: that lower bound raises the estimate, never
 * lowers it, so a task that always times out does not stay cheap.
 */
export class CostModel {
  private readonly estimates = new Map<string, number>();

  constructor(private readonly priorMs: number) {}

  /** Estimated run time of one `task`, in ms. */
  estimate(task: string): number {
    return this.estimates.get(task) ?? this.priorMs;
  }

  /** Whether `task` has been measured at least once. */
  measured(task: string): boolean {
    return this.estimates.has(task);
  }

  /** A completed run of `task` that took `runMs`. */
  record(task: string, runMs: number): void {
    const previous = this.estimates.get(task);
    this.estimates.set(
      task,
      previous === undefined ? runMs : previous + SMOOTHING * (runMs - previous),
    );
  }

  /** A run that was stopped after `elapsedMs`: the task costs at least that much. */
  recordAtLeast(task: string, elapsedMs: number): void {
    if (elapsedMs > this.estimate(task)) this.estimates.set(task, elapsedMs);
  }
}
