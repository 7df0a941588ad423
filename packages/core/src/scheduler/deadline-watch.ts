import { lateToStart, neededToStart, type Waiting } from './waiting';

/** What the watch needs of its scheduler. */
export interface DeadlineWatchHost {
  now(): number;
  /** CoDel's target queue delay (ms). */
  readonly targetDelayMs: number;
  /** Estimates a waiting task anew if the cost model learnt since its last estimate. */
  refresh(waiting: Waiting): void;
  /** A task moved ahead of its key's line: start what may start now. */
  rescued(): void;
  /** Takes out and refuses a task that can no longer start in time. */
  shed(waiting: Waiting, now: number): void;
}

/**
 * Rescue before the deadline: newest-first service must not starve a patient
 * caller. A waiting task moves ahead of its own key's line (not of other
 * keys: fair shares hold) once half of its slack (the time from its arrival
 * to its latest start) is spent, or its own run time plus the target before
 * its latest start if that comes first; it is shed at its latest start if it
 * is still waiting, rather than left to time out, so an admitted task ends in
 * 504 only if it ran longer than estimated. One run time is enough only while
 * the threads keep to their estimates: under load they ran up to 6 times
 * longer, and the bench's patient clients lost 4 of 12 tasks rescued that
 * late (docs/adr/0020-backstop-holds-the-waiting-clients.md). Half the slack
 * still leaves newest-first service the first half to serve the impatient.
 */
export class DeadlineWatch {
  constructor(private readonly host: DeadlineWatchHost) {}

  /** Watches a task that has just started to wait. */
  arm(waiting: Waiting, now: number): void {
    const latestStart = waiting.ticket.deadlineAt - waiting.cost;
    const rescueAt = Math.min(
      latestStart - waiting.cost - this.host.targetDelayMs,
      now + (latestStart - now) / 2,
    );
    waiting.timer = setTimeout(
      () => {
        if (waiting.place !== 'line' || waiting.handle?.rescue() !== true) return;
        waiting.place = 'rescue';
        this.armShedLate(waiting);
        this.host.rescued();
      },
      // Whole milliseconds: timers of one duration share Node's list for it (worker-pool.service.ts).
      Math.max(0, Math.ceil(rescueAt - now)),
    );
  }

  /**
   * Sheds a rescued task at its latest start, if it is still waiting then. A
   * task whose cost is not known at its size has no latest start before its
   * deadline: the pool's own deadline ends it.
   */
  private armShedLate(waiting: Waiting): void {
    const needMs = neededToStart(waiting.estimate);
    if (needMs <= 0) return;
    waiting.timer = setTimeout(
      () => this.shedLate(waiting),
      Math.max(0, Math.ceil(waiting.ticket.deadlineAt - needMs - this.host.now())),
    );
  }

  private shedLate(waiting: Waiting): void {
    const now = this.host.now();
    this.host.refresh(waiting);
    if (!lateToStart(waiting, now)) {
      this.armShedLate(waiting);
      return;
    }
    this.host.shed(waiting, now);
  }
}
