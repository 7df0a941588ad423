/** How fast the estimate follows new measurements (exponential moving average). */
const SMOOTHING = 0.3;

/**
 * What a task costs a thread: per task name, an exponential moving average of
 * its recent run time per unit of size. A task that declares its input's size
 * (`TaskDefinition.size`: iterations, bytes, …) is estimated in proportion to
 * it, so a `compute` 40 × larger than the last ones is not taken for one of
 * them; a task that does not declares size 1, and is estimated at its recent
 * run times. Cold start: a task never measured is estimated at `priorMs`
 * whatever its size (optimistic: it is admitted, and its first run replaces
 * the prior). A task that was stopped (deadline, crash, client gone) ran at
 * least as long as it was measured: that lower bound raises the estimate,
 * never lowers it, so a task that always times out does not stay cheap.
 */
export class CostModel {
  /** Milliseconds per unit of size, per task. */
  private readonly perUnit = new Map<string, number>();

  constructor(private readonly priorMs: number) {}

  /** Estimated run time of one `task` of this `size`, in ms. */
  estimate(task: string, size = 1): number {
    const perUnit = this.perUnit.get(task);
    return perUnit === undefined ? this.priorMs : perUnit * unitsOf(size);
  }

  /** Whether `task` has been measured at least once. */
  measured(task: string): boolean {
    return this.perUnit.has(task);
  }

  /** A completed run of `task`, of this `size`, that took `runMs`. */
  record(task: string, runMs: number, size = 1): void {
    const sample = runMs / unitsOf(size);
    const previous = this.perUnit.get(task);
    this.perUnit.set(
      task,
      previous === undefined ? sample : previous + SMOOTHING * (sample - previous),
    );
  }

  /** A run of `task`, of this `size`, stopped after `elapsedMs`: it costs at least that much. */
  recordAtLeast(task: string, elapsedMs: number, size = 1): void {
    const sample = elapsedMs / unitsOf(size);
    if (sample > (this.perUnit.get(task) ?? this.priorMs / unitsOf(size))) {
      this.perUnit.set(task, sample);
    }
  }
}

/** A size below one unit (or not a number) counts as one: estimates never divide by zero. */
const unitsOf = (size: number) => (size >= 1 ? size : 1);
