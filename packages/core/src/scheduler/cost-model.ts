/**
 * What a task is expected to cost a thread, and how sure that is. Refusals rest
 * on `floorMs` only; `ms` orders, weighs and batches the queue; `highMs` is the
 * time a start must leave a task that already waited (ADR 0041).
 */
export interface CostEstimate {
  /** Best guess (ms): the median of the runs measured at this size, or the model's curve. */
  readonly ms: number;
  /** What the task surely costs at least (ms): measured at this size or a smaller one; 0 if nothing is. */
  readonly floorMs: number;
  /** What nine runs in ten stay under (ms), where measured; `ms` elsewhere. */
  readonly highMs: number;
  /**
   * Like `floorMs`, from every run measured, one or two included (ms): what a
   * task that already waited needs at the least to be worth starting.
   */
  readonly seenMs: number;
  /**
   * The fastest run measured at this size or a smaller one (ms): a task that
   * would start at once is refused for its own cost only above it, since any
   * deadline over it can still be met (ADR 0041).
   */
  readonly fastestMs: number;
  /** The size was measured closely enough (on it, or between two measured sizes) to trust `ms`. */
  readonly sure: boolean;
}

/** Runs a size class keeps: the newest ones, so the estimate follows a task whose cost drifts. */
const RING = 16;

/**
 * Runs at one size disagree widely when the upper quartile of their times is
 * more than this many times the lower one: inputs of one size and cost class
 * that still cost very differently (a PDF's pages, a body's compressibility).
 * Such a class is not sure, and its floor is its fastest run: uncertainty
 * admits (ADR 0054).
 */
export const WIDE_SPREAD = 2;
/**
 * Runs at one size agree closely when the slowest is at most this many times
 * the fastest. Two such runs make the size sure before `sureAfterRuns` (a
 * burst after a few runs is refused on arrival, not once its first tasks
 * end), with a floor of the fastest over `EARLY_FLOOR_MARGIN`: first runs
 * may all be slow alike (ADR 0058).
 */
const CLOSE_SPREAD = 1.25;
const MIN_CLOSE_RUNS = 2;
const EARLY_FLOOR_MARGIN = 1.5;
/** Estimates kept per task between two runs; past it they are made afresh. */
const MAX_ESTIMATES_KEPT = 1024;

/**
 * Tasks and cost classes the model keeps apart at most: a task whose
 * `costClass` returned unbounded labels must not grow it without end. Runs of
 * a class beyond it are not recorded, so its tasks are never refused for
 * their own cost, only for the work ahead of them.
 */
export const MAX_COST_KEYS = 1024;

/**
 * Runs of a size class before it counts as measured, on a pool of `threads`:
 * two per thread (at most half a class's runs). The first run on each thread
 * is slow — the task's code not compiled yet, the burst that brought it still
 * being read on the event loop — so a floor taken from the first wave alone
 * refuses work the second wave finishes; with two per thread it is the
 * fastest of both waves, and one slow run (a collection, a busy core) cannot
 * raise it (ADR 0041).
 */
export const sureAfterRuns = (threads: number) =>
  Math.min(RING / 2, Math.max(2, 2 * Math.floor(threads)));

/** The growth exponent the curve assumes until two measured sizes show their own. */
const DEFAULT_EXPONENT = 1;
const MIN_EXPONENT = 0.5;
const MAX_EXPONENT = 3;

/** Sizes within a factor of two share a class: 1, 2–3, 4–7, … */
const classOf = (units: number) => Math.floor(Math.log2(units));

/** A size below one unit (or not a number) counts as one: estimates never divide by zero. */
const unitsOf = (size: number) => (size >= 1 ? size : 1);

/** The size class a task of this size is measured in. */
export const sizeClassOf = (size: number) => classOf(unitsOf(size));

/** The newest runs of one size class of one task. */
class SizeClass {
  private readonly times: number[] = [];
  private readonly sizes: number[] = [];
  /** Whose each run was (the client's fair-share key). */
  private readonly clients: string[] = [];
  private next = 0;
  private summary: ClassSummary | undefined;
  /** When the newest run of this class was recorded (the model's clock). */
  lastAt = 0;

  add(units: number, runMs: number, at: number, client: string): void {
    this.times[this.next] = runMs;
    this.sizes[this.next] = units;
    this.clients[this.next] = client;
    this.next = (this.next + 1) % RING;
    this.lastAt = at;
    this.summary = undefined;
  }

  /** The class's lower-quartile time, which only a stopped run can raise. */
  get lowMs(): number {
    return this.summarize().lowMs;
  }

  summarize(): ClassSummary {
    if (this.summary !== undefined) return this.summary;
    const times = [...this.times].sort((a, b) => a - b);
    const sizes = [...this.sizes].sort((a, b) => a - b);
    const last = times.length - 1;
    const lowMs = times[Math.floor(last / 4)] as number;
    const first = this.clients[0] as string;
    this.summary = {
      runs: times.length,
      onlyClient: this.clients.every((client) => client === first) ? first : undefined,
      wide: (times[Math.ceil((3 * last) / 4)] as number) > WIDE_SPREAD * lowMs,
      close: last >= 1 && (times[last] as number) <= CLOSE_SPREAD * (times[0] as number),
      size: quantile(sizes, 0.5),
      ms: quantile(times, 0.5),
      // The floor pairs a low time with a high size: for a cost that grows
      // with size, the q-quantile of the times is the cost at the q-quantile of
      // the sizes, so this pair bounds the cost at that size from below, and
      // slow runs (a collection, a busy core) cannot raise it unless they are
      // three in four.
      lowMs,
      lowSize: sizes[Math.ceil((3 * last) / 4)] as number,
      highMs: times[Math.ceil(last * 0.9)] as number,
      fastestMs: times[0] as number,
      largestSize: sizes[last] as number,
    };
    return this.summary;
  }
}

interface ClassSummary {
  readonly runs: number;
  /** The one client whose runs these all are; undefined when they are several clients'. */
  readonly onlyClient: string | undefined;
  /** The runs disagree widely (`WIDE_SPREAD`): the class is not sure, and its floor is its fastest run. */
  readonly wide: boolean;
  /** Two runs or more, all within `CLOSE_SPREAD` of each other. */
  readonly close: boolean;
  /** Median size and run time. */
  readonly size: number;
  readonly ms: number;
  /** The floor's pair: the lower-quartile time, the upper-quartile size. */
  readonly lowMs: number;
  readonly lowSize: number;
  /** The 90th-percentile run time. */
  readonly highMs: number;
  /** The fastest run, and the largest size it bounds from below. */
  readonly fastestMs: number;
  readonly largestSize: number;
}

/**
 * The key a task's runs are learnt under: its name, and its cost class when
 * its definition declares one (`TaskDefinition.costClass`), so that inputs
 * whose options change the cost per unit are never estimated from each other.
 */
export function costKeyOf(task: string, costClass?: string): string {
  return costClass === undefined || costClass === '' ? task : `${task}\u0000${costClass}`;
}

/**
 * What a task costs a thread, learnt per task and cost class (`costKeyOf`)
 * from its completed runs, as a fixed part (the message, the wake-up, the
 * answer) plus a part that grows with the input's declared size
 * (`TaskDefinition.size`), not necessarily in proportion: `a + b·size^k`.
 *
 * Runs are kept per size class (sizes within a factor of two), the newest
 * sixteen of each, and read through robust statistics: the median is the
 * estimate, the lower quartile the floor, the 90th percentile the high mark.
 * Between two measured classes the estimate follows the line through them on
 * log-log axes. Beyond the measured sizes it follows the curve `a + b·size^k`,
 * with `a` the smallest class's floor and `k` fitted (Theil–Sen: the median of
 * pairwise slopes) over classes whose variable part stands out of the fixed
 * one; such an estimate is not `sure`, and its floor is only what a smaller
 * measured size already costs, so a size never measured is never refused for
 * the model's guess (ADR 0041).
 *
 * What refuses (the floor, the fastest run, `sure`) rests only on runs that
 * speak for the asking client: a size class whose runs are all one other
 * client's says nothing about this client's inputs, and one whose runs
 * disagree widely (`WIDE_SPREAD`) is not sure and floors at its fastest run
 * (ADR 0054). The median (`ms`) still counts every run: it only orders and
 * weighs the queue.
 *
 * A run that was stopped (deadline, crash, client gone) cost at least what it
 * ran: it raises its class's floor, never lowers it, so a task that always
 * overruns does not stay cheap and one cancelled early does not look cheap.
 */
export class CostModel {
  private readonly tasks = new Map<string, Map<number, SizeClass>>();
  /** Each task's class summaries, smallest first, until its next run is recorded. */
  private readonly points = new Map<string, readonly ClassSummary[]>();
  /**
   * Each task's estimates so far, by size and client, until its next run is recorded: a
   * crowd of like requests is estimated once per run, not once per waiting task (ADR 0057).
   */
  private readonly estimates = new Map<string, Map<string, CostEstimate>>();
  /** Bumped on every recorded run, so a caller can tell when estimates may have changed. */
  private changes = 0;

  /** Runs of a size class before its floor counts and its estimate is sure (`sureAfterRuns`). */
  private readonly sureAfter: number;

  constructor(
    private readonly priorMs: number,
    private readonly now: () => number = () => 0,
    threads = 1,
  ) {
    this.sureAfter = sureAfterRuns(threads);
  }

  /** How many runs were recorded: a waiting task's estimate is refreshed when this moves. */
  get version(): number {
    return this.changes;
  }

  /**
   * The cost of `task` (a `costKeyOf` key) at `size`, for `client`: only
   * runs of several clients, or of this client alone, can make it sure.
   */
  estimate(task: string, size = 1, client = ''): CostEstimate {
    const classes = this.tasks.get(task);
    if (classes === undefined) {
      return {
        ms: this.priorMs,
        floorMs: 0,
        highMs: this.priorMs,
        seenMs: 0,
        fastestMs: 0,
        sure: false,
      };
    }
    let known = this.estimates.get(task);
    if (known === undefined) {
      known = new Map();
      this.estimates.set(task, known);
    } else if (known.size >= MAX_ESTIMATES_KEPT) known.clear();
    const units = unitsOf(size);
    const key = `${units}\u0000${client}`;
    const kept = known.get(key);
    if (kept !== undefined) return kept;
    let points = this.points.get(task);
    if (points === undefined) {
      points = summaries(classes);
      this.points.set(task, points);
    }
    const estimate = estimateFrom(points, units, this.sureAfter, client);
    known.set(key, estimate);
    return estimate;
  }

  /** Whether `task` has been measured at least once. */
  measured(task: string): boolean {
    return this.tasks.has(task);
  }

  /** When the newest run of `task` at the size class of `size` was recorded; undefined if never. */
  lastRunAt(task: string, size = 1): number | undefined {
    return this.tasks.get(task)?.get(classOf(unitsOf(size)))?.lastAt;
  }

  /** A completed run of `task`, of this `size`, that took `runMs`, for `client`. */
  record(task: string, runMs: number, size = 1, client = ''): void {
    const units = unitsOf(size);
    this.classFor(task, units)?.add(units, runMs, this.now(), client);
    this.changed(task);
  }

  /** A run of `task`, of this `size`, stopped after `elapsedMs`: it costs at least that much. */
  recordAtLeast(task: string, elapsedMs: number, size = 1, client = ''): void {
    const units = unitsOf(size);
    const sizeClass = this.tasks.get(task)?.get(classOf(units));
    if (sizeClass !== undefined && elapsedMs <= sizeClass.lowMs) return;
    this.classFor(task, units)?.add(units, elapsedMs, this.now(), client);
    this.changed(task);
  }

  private changed(task: string): void {
    this.points.delete(task);
    // Cleared, not dropped: a task recorded thousands of times a second keeps one map.
    this.estimates.get(task)?.clear();
    this.changes += 1;
  }

  /** The size class to record in; undefined when a new task would pass `MAX_COST_KEYS`. */
  private classFor(task: string, units: number): SizeClass | undefined {
    let classes = this.tasks.get(task);
    if (classes === undefined) {
      if (this.tasks.size >= MAX_COST_KEYS) return undefined;
      classes = new Map();
      this.tasks.set(task, classes);
    }
    const index = classOf(units);
    let sizeClass = classes.get(index);
    if (sizeClass === undefined) {
      sizeClass = new SizeClass();
      classes.set(index, sizeClass);
    }
    return sizeClass;
  }
}

/** A task's classes, smallest first. A task has at most ~50 classes (sizes up to 2^53). */
function summaries(classes: ReadonlyMap<number, SizeClass>): ClassSummary[] {
  return [...classes.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, sizeClass]) => sizeClass.summarize());
}

function estimateFrom(
  points: readonly ClassSummary[],
  units: number,
  sureAfter: number,
  client: string,
): CostEstimate {
  const speaks = (point: ClassSummary, runs: number) =>
    point.runs >= runs && (point.onlyClient === undefined || point.onlyClient === client);
  // Enough runs, or fewer that agree closely (then floored with a margin).
  const surely = (point: ClassSummary) =>
    speaks(point, point.close ? Math.min(MIN_CLOSE_RUNS, sureAfter) : sureAfter);
  const early = (point: ClassSummary) => point.runs < sureAfter;
  const floorMs = floorAt(points, units, surely, early);
  const seenMs = floorAt(points, units, (point) => speaks(point, 1));
  const fastestMs = fastestAt(points, units, surely);
  const sure = isSure(points, units, surely);
  const ms = Math.max(
    floorMs,
    curveAt(points, units, (point) => point.ms),
  );
  const high = sure ? curveAt(points, units, (point) => point.highMs) : ms;
  return { ms, floorMs, highMs: Math.max(ms, high), seenMs, fastestMs, sure };
}

/** The largest of the fastest runs of the classes counted whose every size is at most `units`. */
function fastestAt(
  points: readonly ClassSummary[],
  units: number,
  counts: (point: ClassSummary) => boolean,
): number {
  let fastest = 0;
  for (const point of points) {
    if (counts(point) && point.largestSize <= units) {
      fastest = Math.max(fastest, point.fastestMs);
    }
  }
  return fastest;
}

/**
 * The largest floor measured at this size or below, over the classes
 * counted: a larger input costs at least what a smaller one measurably did.
 * A class whose runs disagree widely floors at its fastest run; one counted
 * on few close runs (`early`), at its fastest over `EARLY_FLOOR_MARGIN`.
 */
function floorAt(
  points: readonly ClassSummary[],
  units: number,
  counts: (point: ClassSummary) => boolean,
  early: (point: ClassSummary) => boolean = () => false,
): number {
  let floor = 0;
  for (const point of points) {
    if (!counts(point)) continue;
    if (point.wide) {
      if (point.largestSize <= units) floor = Math.max(floor, point.fastestMs);
    } else if (early(point)) {
      if (point.largestSize <= units) floor = Math.max(floor, point.fastestMs / EARLY_FLOOR_MARGIN);
    } else if (point.lowSize <= units) floor = Math.max(floor, point.lowMs);
  }
  return floor;
}

/**
 * Measured in its own class, or lying between two measured classes, by
 * classes counted; never where its own class's runs disagree widely.
 */
function isSure(
  points: readonly ClassSummary[],
  units: number,
  counts: (point: ClassSummary) => boolean,
): boolean {
  const own = classOf(units);
  let below = false;
  let above = false;
  for (const point of points) {
    if (!counts(point)) continue;
    const index = classOf(point.size);
    if (index === own) return !point.wide;
    if (point.wide) continue;
    if (index < own) below = true;
    else above = true;
  }
  return below && above;
}

/**
 * `value` at `units`: on the line through the two measured classes around it
 * (log-log), the nearest class's below the smallest, the fitted curve above
 * the largest.
 */
function curveAt(
  points: readonly ClassSummary[],
  units: number,
  value: (point: ClassSummary) => number,
): number {
  const first = points[0] as ClassSummary;
  const last = points[points.length - 1] as ClassSummary;
  if (units <= first.size) return value(first);
  if (units >= last.size) return extrapolate(points, units, value(last), last.size);
  for (let index = 1; index < points.length; index++) {
    const high = points[index] as ClassSummary;
    if (units > high.size) continue;
    const low = points[index - 1] as ClassSummary;
    const along = Math.log(units / low.size) / Math.log(high.size / low.size);
    const lowValue = value(low);
    const highValue = value(high);
    if (lowValue <= 0 || highValue <= 0) return lowValue + (highValue - lowValue) * along;
    return lowValue * (highValue / lowValue) ** along;
  }
  return value(last);
}

/** `a + (atLast - a)·(units / lastSize)^k` beyond the largest measured class. */
function extrapolate(
  points: readonly ClassSummary[],
  units: number,
  atLast: number,
  lastSize: number,
): number {
  const fixed = Math.min((points[0] as ClassSummary).lowMs, atLast);
  const exponent = growthExponent(points, fixed);
  return fixed + (atLast - fixed) * (units / lastSize) ** exponent;
}

/**
 * The exponent `k` of the variable part, as the median of the slopes between
 * pairs of classes (Theil–Sen, robust to a class that is off) on log-log axes
 * of size against time above the fixed part. Classes whose time is within
 * half the fixed part of it say nothing about growth and are left out.
 */
function growthExponent(points: readonly ClassSummary[], fixed: number): number {
  const growing = points.filter((point) => point.ms - fixed > fixed / 2);
  const slopes: number[] = [];
  for (let i = 0; i < growing.length; i++) {
    for (let j = i + 1; j < growing.length; j++) {
      const a = growing[i] as ClassSummary;
      const b = growing[j] as ClassSummary;
      if (a.size === b.size) continue;
      slopes.push(Math.log((b.ms - fixed) / (a.ms - fixed)) / Math.log(b.size / a.size));
    }
  }
  if (slopes.length === 0) return DEFAULT_EXPONENT;
  slopes.sort((a, b) => a - b);
  const exponent = quantile(slopes, 0.5);
  return Math.min(MAX_EXPONENT, Math.max(MIN_EXPONENT, exponent));
}

/** The `q`-quantile of sorted `values`, interpolated between ranks. */
function quantile(sorted: readonly number[], q: number): number {
  const rank = (sorted.length - 1) * q;
  const low = Math.floor(rank);
  const lowValue = sorted[low] as number;
  const highValue = sorted[Math.min(low + 1, sorted.length - 1)] as number;
  return lowValue + (highValue - lowValue) * (rank - low);
}
