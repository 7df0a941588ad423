import { CoDel } from './codel';
import type { ServeOrder } from './fair-queue';
import { Impatience } from './impatience';

/**
 * CoDel's standing queue turns into shedding and newest-first service only
 * while clients are seen giving up on waiting tasks (`impatience.ts`), over
 * windows of this many intervals, and at least this long: clients' patience
 * is counted in seconds, whatever the interval.
 */
const IMPATIENCE_WINDOW_INTERVALS = 10;
const IMPATIENCE_WINDOW_MIN_MS = 5_000;

/**
 * CoDel and adaptive LIFO, on evidence (ADR 0052): while the queue delay
 * stays above the target (`codel.ts`) and clients are seen giving up (a
 * waiting task abandoned, or shed for its deadline, lately), each key's
 * newest waiting task runs first, since its client is the most surely still
 * there, and tasks whose caller said nothing of its patience are shed for
 * queue delay; FIFO otherwise: a standing queue alone is a crowd served in
 * line, and shedding it would only turn answers that arrive in time into
 * refusals asked again at once.
 */
export class OverloadMode {
  private readonly codel: CoDel;
  private readonly impatience: Impatience;

  constructor(
    options: { readonly targetDelayMs: number; readonly intervalMs: number },
    private readonly now: () => number,
  ) {
    this.codel = new CoDel({ targetMs: options.targetDelayMs, intervalMs: options.intervalMs });
    this.impatience = new Impatience(
      Math.max(IMPATIENCE_WINDOW_MIN_MS, options.intervalMs * IMPATIENCE_WINDOW_INTERVALS),
    );
  }

  /** Overloaded: shed for queue delay, serve the newest first. */
  get shedding(): boolean {
    return this.codel.overloaded && this.impatience.seen(this.now());
  }

  get order(): ServeOrder {
    return this.shedding ? 'lifo' : 'fifo';
  }

  /** The queue delay of the last task that left the queue for a thread. */
  get lastDelayMs(): number {
    return this.codel.lastDelayMs;
  }

  /** A task left the queue for a thread after `delayMs`. */
  started(delayMs: number, now: number): void {
    this.impatience.left(now, false);
    this.codel.dequeued(delayMs, now);
  }

  /** A task left the queue without running: its client gave up, or it was shed for its deadline. */
  gaveUp(now: number): void {
    this.impatience.left(now, true);
  }

  /** Nothing waits any more. */
  drained(): void {
    this.codel.drained();
  }
}
