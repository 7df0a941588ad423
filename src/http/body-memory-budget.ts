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

  constructor(readonly limitBytes: number) {}

  /** Reserves `bytes` if they fit beside what is held; false (and counted) if not. */
  tryReserve(bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) {
      this.refused++;
      return false;
    }
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
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
