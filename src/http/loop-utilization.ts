import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How often the event loop's utilization is read. */
const SAMPLE_MS = 100;

/**
 * The event loop's own saturation, apart from the pool's: the share of the
 * last sample period (100 ms) the loop spent running callbacks rather than
 * waiting for I/O (`performance.eventLoopUtilization`). Near 1, the loop
 * itself is the limit: with small tasks, reading more requests only makes
 * every callback wait longer (docs/adr/0052-a-crowd-waits-in-line.md).
 */
export class LoopUtilization {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private current = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(sampleMs = SAMPLE_MS) {
    this.timer = setInterval(() => this.sample(), sampleMs);
    // A reading is no reason to keep the process alive.
    this.timer.unref();
  }

  /** The utilization of the last sample period, 0 to 1. */
  get value(): number {
    return this.current;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const now = performance.eventLoopUtilization();
    this.current = performance.eventLoopUtilization(now, this.last).utilization;
    this.last = now;
  }
}
