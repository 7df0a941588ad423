/**
 * The bytes of request bodies one process holds at once: being received,
 * queued or on a thread. A body is admitted only while it fits, so many big
 * uploads at once are refused early instead of taking the process past its
 * memory limit (docs/adr/0015-bodies-refused-while-they-stream.md).
 *
 * Plain bookkeeping: the edge reserves a body's bytes as it learns them (its
 * `Content-Length`, or each chunk of a chunked body) and releases them when
 * the response is over.
 */
export class BodyMemoryBudget {
  private held = 0;
  private refused = 0;
  /** The most held since the budget was last empty. */
  private peak = 0;
  private readonly drainedListeners: Array<(peakBytes: number) => void> = [];

  constructor(readonly limitBytes: number) {}

  /** Reserves `bytes` if they fit beside what is held; false (and counted) if not. */
  tryReserve(bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) {
      this.refused++;
      return false;
    }
    this.held += bytes;
    if (this.held > this.peak) this.peak = this.held;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
    if (this.held > 0 || this.peak === 0) return;
    const peak = this.peak;
    this.peak = 0;
    for (const listener of this.drainedListeners) listener(peak);
  }

  /** Calls `listener` with the peak each time the budget empties after holding bytes. */
  onDrained(listener: (peakBytes: number) => void): void {
    this.drainedListeners.push(listener);
  }

  /** Bytes of bodies held now. */
  get bytesHeld(): number {
    return this.held;
  }

  /** Bodies refused because they did not fit, since the start. */
  get refusals(): number {
    return this.refused;
  }
}
