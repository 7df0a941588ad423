/** How fast the estimate follows new measurements (exponential moving average). */
const SMOOTHING = 0.3;

/**
 * What a task costs a thread: per task name and per size class (sizes within a
 * factor of two), an exponential moving average of its recent run time per
 * unit of size. A task that declares its input's size (`TaskDefinition.size`:
 * iterations, bytes, …) is estimated in proportion to it, so a `compute` 40 ×
 * larger than the last ones is not taken for one of them. Time per unit is
 * learnt per size class because few tasks are linear: `compute` spends 29 ns
 * per iteration at 2 M iterations and 78 ns at 24 M (`Math.sin` of large
 * arguments), so one rate for all sizes admitted long tasks at 40 % of their
 * real cost. A class never measured takes its rate from the measured classes
 * beside it (geometric interpolation between the two nearest, or the nearest
 * one's rate beyond them). A task that does not declare its size is one class,
 * estimated at its recent run times.
 *
 * Cold start: a task never measured is estimated at `priorMs` whatever its
 * size (optimistic: it is admitted, and its first run replaces the prior). A
 * task that was stopped (deadline, crash, client gone) ran at least as long as
 * it was measured: that lower bound raises the estimate, never lowers it, so a
 * task that always times out does not stay cheap.
 */
export class CostModel {
  /** Milliseconds per unit of size, per task, per size class. */
  private readonly perUnit = new Map<string, Map<number, number>>();

  constructor(private readonly priorMs: number) {}

  /** Estimated run time of one `task` of this `size`, in ms. */
  estimate(task: string, size = 1): number {
    const classes = this.perUnit.get(task);
    if (classes === undefined) return this.priorMs;
    const units = unitsOf(size);
    return rateFor(classes, classOf(units)) * units;
  }

  /** Whether `task` has been measured at least once. */
  measured(task: string): boolean {
    return this.perUnit.has(task);
  }

  /** A completed run of `task`, of this `size`, that took `runMs`. */
  record(task: string, runMs: number, size = 1): void {
    const units = unitsOf(size);
    const classes = this.classesOf(task);
    const sizeClass = classOf(units);
    const sample = runMs / units;
    const previous = classes.get(sizeClass);
    classes.set(
      sizeClass,
      previous === undefined ? sample : previous + SMOOTHING * (sample - previous),
    );
  }

  /** A run of `task`, of this `size`, stopped after `elapsedMs`: it costs at least that much. */
  recordAtLeast(task: string, elapsedMs: number, size = 1): void {
    const units = unitsOf(size);
    const sample = elapsedMs / units;
    if (sample > this.estimate(task, size) / units) {
      this.classesOf(task).set(classOf(units), sample);
    }
  }

  private classesOf(task: string): Map<number, number> {
    let classes = this.perUnit.get(task);
    if (classes === undefined) {
      classes = new Map();
      this.perUnit.set(task, classes);
    }
    return classes;
  }
}

/** A size below one unit (or not a number) counts as one: estimates never divide by zero. */
const unitsOf = (size: number) => (size >= 1 ? size : 1);

/** Sizes within a factor of two share a class: 1, 2–3, 4–7, … */
const classOf = (units: number) => Math.floor(Math.log2(units));

/**
 * The time per unit of `sizeClass`: measured, or interpolated geometrically
 * between the nearest measured classes below and above, or the nearest one's.
 * A task has at most ~50 classes (sizes up to 2^53): the scan is short.
 */
function rateFor(classes: ReadonlyMap<number, number>, sizeClass: number): number {
  const own = classes.get(sizeClass);
  if (own !== undefined) return own;
  let below: number | undefined;
  let above: number | undefined;
  for (const measured of classes.keys()) {
    if (measured < sizeClass && (below === undefined || measured > below)) below = measured;
    if (measured > sizeClass && (above === undefined || measured < above)) above = measured;
  }
  if (below === undefined) return classes.get(above!)!;
  if (above === undefined) return classes.get(below)!;
  const low = classes.get(below)!;
  const high = classes.get(above)!;
  return low * (high / low) ** ((sizeClass - below) / (above - below));
}
