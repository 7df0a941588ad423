/** Counts of the tasks that left the queue in one stretch of time. */
interface Bucket {
  left: number;
  gaveUp: number;
}

/**
 * Whether waiting costs answers: of the tasks that left the queue lately
 * (started, abandoned by their client, or shed for their deadline), the share
 * whose client gave up or whose deadline passed. A standing queue is an
 * overload only with this evidence; without it, it is a crowd whose answers
 * all arrive in time, and shedding it would turn them into refusals asked
 * again at once (docs/adr/0052-a-crowd-waits-in-line.md).
 *
 * "Lately" is the current and the previous window, so the evidence fades
 * within one to two windows of the last give-up; a share, not a count, so
 * that a load test's end or a few clients navigating away do not turn a
 * crowd of thousands into an overload.
 */
export class Impatience {
  private current: Bucket = { left: 0, gaveUp: 0 };
  private previous: Bucket = { left: 0, gaveUp: 0 };
  private currentSince = -Infinity;

  constructor(
    private readonly windowMs: number,
    /** The least share of give-ups that counts as evidence. */
    private readonly minShare = IMPATIENT_SHARE,
  ) {}

  /** A task left the queue: `gaveUp` when its client left first or its deadline did not allow it to start. */
  left(now: number, gaveUp: boolean): void {
    this.roll(now);
    this.current.left += 1;
    if (gaveUp) this.current.gaveUp += 1;
  }

  /** Clients are giving up on waiting tasks, lately and more than a stray few. */
  seen(now: number): boolean {
    this.roll(now);
    const gaveUp = this.current.gaveUp + this.previous.gaveUp;
    return gaveUp > 0 && gaveUp >= this.minShare * (this.current.left + this.previous.left);
  }

  private roll(now: number): void {
    const age = now - this.currentSince;
    if (age < this.windowMs) return;
    this.previous = age < 2 * this.windowMs ? this.current : { left: 0, gaveUp: 0 };
    this.current = { left: 0, gaveUp: 0 };
    this.currentSince = now;
  }
}

/** One give-up in fifty tasks leaving the queue: impatient clients give up far more often. */
export const IMPATIENT_SHARE = 0.02;
