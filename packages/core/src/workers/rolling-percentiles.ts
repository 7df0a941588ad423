import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly count: number;
}

/**
 * Percentiles of recent durations, in milliseconds: the last one to two
 * windows, so health reports what the pool does now, not since boot. Two
 * native HDR histograms take turns; recording is O(1) and allocation-free.
 */
export class RollingPercentiles {
  private current: RecordableHistogram = createHistogram();
  private previous: RecordableHistogram = createHistogram();
  private rotatedAt: number;

  constructor(
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.rotatedAt = now();
  }

  record(ms: number): void {
    this.rotate();
    // Microsecond resolution; the histogram takes positive integers only.
    this.current.record(Math.max(1, Math.round(ms * 1000)));
  }

  snapshot(): Percentiles {
    this.rotate();
    const merged = createHistogram();
    merged.add(this.previous);
    merged.add(this.current);
    if (merged.count === 0) return { p50: 0, p95: 0, p99: 0, count: 0 };
    const ms = (percentile: number) => merged.percentile(percentile) / 1000;
    return { p50: ms(50), p95: ms(95), p99: ms(99), count: merged.count };
  }

  private rotate(): void {
    const elapsed = this.now() - this.rotatedAt;
    if (elapsed < this.windowMs) return;
    // After two idle windows both halves are stale.
    this.previous = elapsed >= 2 * this.windowMs ? createHistogram() : this.current;
    this.current = createHistogram();
    this.rotatedAt = this.now();
  }
}
