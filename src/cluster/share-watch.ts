/** What the primary asks of the busiest process when the shares drift apart. */
export interface Rebalance {
  /** The process (cluster worker id) that makes room. */
  readonly id: number;
  /** The share of its connections that move. */
  readonly fraction: number;
}

export interface ShareWatchOptions {
  /** A process answering more than this many times its fair share (1/N) makes room. */
  readonly maxShareRatio: number;
  /** Below this many answers per report, over all processes, shares are noise. */
  readonly minAnswers: number;
}

export const DEFAULT_SHARE_WATCH: ShareWatchOptions = Object.freeze({
  maxShareRatio: 1.4,
  minAnswers: 20,
});

/**
 * Watches how many requests each process answered since its last report, and
 * names the busiest one when it answers far more than its fair share (ADR
 * 0018). With the kernel dealing connections nothing else evens them out: a
 * connection closed by the age bound lands wherever the kernel puts it.
 * Asked to make room, the busiest process moves the share of its
 * connections it has above the mean, while it does not accept.
 */
export class ShareWatch {
  private readonly answered = new Map<number, number>();

  constructor(private readonly options: ShareWatchOptions = DEFAULT_SHARE_WATCH) {}

  /** A process's report: requests answered since its last one. */
  record(id: number, answered: number): void {
    this.answered.set(id, answered);
  }

  /** Forgets a process that left. */
  forget(id: number): void {
    this.answered.delete(id);
  }

  /**
   * The process to make room among `serving` (each must have reported), or
   * undefined when the shares are near enough, or too few answers to tell.
   * Every report is used once: the next decision waits for fresh ones.
   */
  decide(serving: readonly number[]): Rebalance | undefined {
    if (serving.length < 2 || !serving.every((id) => this.answered.has(id))) return undefined;
    const counts = serving.map((id) => ({ id, answered: this.answered.get(id)! }));
    this.answered.clear();
    const total = counts.reduce((sum, { answered }) => sum + answered, 0);
    if (total < this.options.minAnswers) return undefined;
    const mean = total / counts.length;
    const busiest = counts.reduce((a, b) => (b.answered > a.answered ? b : a));
    if (busiest.answered <= mean * this.options.maxShareRatio) return undefined;
    return { id: busiest.id, fraction: (busiest.answered - mean) / busiest.answered };
  }
}
