/**
 * Whether the pool's queue is saturated, with hysteresis: it becomes
 * saturated at the high-water mark and stays so until the queue is down to
 * half of it, so readiness does not flap while the queue hovers at the mark.
 */
export class QueueSaturation {
  private saturated = false;

  constructor(private readonly highWater: number) {}

  /** Queue length at which readiness fails: `READY_QUEUE_HIGH_WATER` of the limit, at least 1. */
  static highMark(maxQueue: number, highWater: number): number {
    return Math.max(1, Math.ceil(maxQueue * highWater));
  }

  /** Queue length at or below which readiness recovers. */
  static lowMark(highMark: number): number {
    return Math.floor(highMark / 2);
  }

  /** Updates the state with the current queue length and returns it. */
  update(queueSize: number, maxQueue: number): boolean {
    const high = QueueSaturation.highMark(maxQueue, this.highWater);
    if (queueSize >= high) this.saturated = true;
    else if (queueSize <= QueueSaturation.lowMark(high)) this.saturated = false;
    return this.saturated;
  }
}
