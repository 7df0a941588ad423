/** CoDel's two parameters, in milliseconds. */
export interface CoDelOptions {
  /** Queue delay the controller holds the queue near. */
  readonly targetMs: number;
  /** How long the delay must stay above the target before the queue counts as overloaded. */
  readonly intervalMs: number;
}

/**
 * When a queue is overloaded, from the time tasks spend in it (their
 * sojourn). Entering is CoDel's rule (RFC 8289, section 4): the delay of the
 * tasks leaving for a thread stayed at or above `targetMs` for a whole
 * `intervalMs`, so this is a standing queue, not a burst that will drain.
 * Leaving is Facebook's rule for its server queues: only when the queue has
 * emptied. While overloaded the scheduler serves the newest first, and the
 * newest have waited little, so their delay says nothing about the backlog;
 * an empty queue does.
 *
 * Pure: every call passes the current time, so tests drive it with numbers.
 */
export class CoDel {
  /** When the delay, if it stays above the target, makes the queue overloaded; undefined while below. */
  private aboveUntil: number | undefined;
  private overloadedNow = false;
  private lastSojournMs = 0;

  constructor(readonly options: CoDelOptions) {}

  get overloaded(): boolean {
    return this.overloadedNow;
  }

  /** The sojourn of the last task that left the queue for a thread. */
  get lastDelayMs(): number {
    return this.lastSojournMs;
  }

  /** A task left the queue for a thread after waiting `sojournMs`, at `now`. */
  dequeued(sojournMs: number, now: number): void {
    this.lastSojournMs = sojournMs;
    if (this.overloadedNow) return;
    if (sojournMs < this.options.targetMs) {
      this.aboveUntil = undefined;
      return;
    }
    if (this.aboveUntil === undefined) this.aboveUntil = now + this.options.intervalMs;
    else if (now >= this.aboveUntil) this.overloadedNow = true;
  }

  /** Nothing is waiting: whatever delay there was has drained. */
  drained(): void {
    this.aboveUntil = undefined;
    this.overloadedNow = false;
  }
}
