/** At most one access line a second for refusals (503 POOL_SATURATED). */
export const REFUSAL_LINE_INTERVAL_MS = 1000;

/**
 * Refusals are counted by `compute_scheduler_refusals_total`; their access
 * lines are sampled. Under overload a refused client asks again at once, and
 * a line per refusal would cost the event loop about as much as answering it
 * (docs/adr/0052-a-crowd-waits-in-line.md). The line that is written says how
 * many were left out before it.
 */
export class RefusalSample {
  private lastAt = -Infinity;
  private skipped = 0;

  constructor(
    private readonly intervalMs = REFUSAL_LINE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The refusals left unlogged since the last line when this one is to be logged; else undefined. */
  take(): number | undefined {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) {
      this.skipped += 1;
      return undefined;
    }
    this.lastAt = now;
    const skipped = this.skipped;
    this.skipped = 0;
    return skipped;
  }
}
