import type { RefusalEstimate } from './refusal';
import { ShareSums } from './share-sums';
import { threadTimeUntil } from './thread-time';
import { lateToStart, type Waiting } from './waiting';

/** Waiting tasks are looked at again no sooner than this after the last look, and … */
const MIN_SPACING_MS = 25;
/**
 * … no sooner than this per task waiting: a look walks every one, so a crowd of
 * 10,000 is looked at twice a second, not in back-to-back stretches of the loop (ADR 0057).
 */
const SPACING_MS_PER_WAITING = 0.05;
/** … and at the latest after this fraction of a new task's deadline (bounded below and above). */
const DEADLINE_FRACTION = 8;
const MAX_WAIT_MS = 1000;

/**
 * When the waiting tasks are looked at again (ADR 0041): soon after a run
 * completes (the model may have learnt that some can no longer finish), and
 * within an eighth of the shortest deadline waiting; never more often than the
 * spacing above. The timer is unref'd: a look at the queue keeps no process alive.
 */
export class RecheckClock {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;
  private lastAt = -Infinity;

  constructor(
    private readonly now: () => number,
    private readonly look: () => void,
  ) {}

  /** A task arrived that may wait for up to `deadlineInMs`. */
  arrived(now: number, deadlineInMs: number, waiting: number): void {
    this.within(now, deadlineInMs / DEADLINE_FRACTION, waiting);
  }

  /** A run completed. */
  ran(now: number, waiting: number): void {
    this.within(now, MIN_SPACING_MS, waiting);
  }

  /** A look ended; the shortest deadline still waiting is `shortestMs` long. */
  looked(now: number, shortestMs: number, waiting: number): void {
    this.within(now, shortestMs / DEADLINE_FRACTION, waiting);
  }

  private within(now: number, withinMs: number, waiting: number): void {
    if (waiting === 0) return;
    const dueAt = Math.max(
      this.lastAt + Math.max(MIN_SPACING_MS, waiting * SPACING_MS_PER_WAITING),
      now + Math.min(MAX_WAIT_MS, Math.max(0, withinMs)),
    );
    if (dueAt >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = dueAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.dueAt = Infinity;
        this.lastAt = this.now();
        this.look();
      },
      Math.max(0, Math.ceil(dueAt - now)),
    );
    this.timer.unref();
  }
}

/** What a look found of a waiting task that can no longer finish. */
export type Unreachable =
  | { readonly waiting: Waiting; readonly late: true }
  | { readonly waiting: Waiting; readonly late: false; readonly facts: RefusalEstimate };

/**
 * One look at every waiting task, with the estimates the model has now:
 * those whose latest start has passed (`late`), or for which the work surely
 * ahead plus their own floor no longer fits before the deadline, in the order
 * they are met; and the shortest deadline of those that stay. Each key's line
 * is walked in the order it would be served; the other keys' work ahead of a
 * task is what round robin serves of them meanwhile. `freeAt`: when each
 * thread frees up, in ms from `now`, by the running tasks' floors.
 */
export function findUnreachable(
  lines: ReadonlyArray<{ readonly entries: readonly Waiting[] }>,
  freeAt: readonly number[],
  now: number,
): { readonly unreachable: Unreachable[]; readonly shortestMs: number } {
  const totals = new ShareSums(lines.map(({ entries }) => sumFloors(entries)));
  const unreachable: Unreachable[] = [];
  let shortestMs = Infinity;
  lines.forEach(({ entries }, line) => {
    let ownAheadMs = 0;
    for (const waiting of entries) {
      const reach = ownAheadMs + waiting.floorMs;
      const aheadMs = ownAheadMs + totals.sumOfMinExcept(line, reach);
      const waitMs = threadTimeUntil(freeAt, aheadMs);
      const leftMs = waiting.ticket.deadlineAt - now;
      if (lateToStart(waiting, now)) {
        unreachable.push({ waiting, late: true });
        continue;
      }
      if (waitMs + waiting.floorMs > leftMs) {
        const facts = { aheadMs: waitMs, ownMs: waiting.floorMs, leftMs };
        unreachable.push({ waiting, late: false, facts });
        continue;
      }
      ownAheadMs = reach;
      shortestMs = Math.min(shortestMs, waiting.ticket.deadlineAt - waiting.enqueuedAt);
    }
  });
  return { unreachable, shortestMs };
}

function sumFloors(entries: readonly Waiting[]): number {
  let sum = 0;
  for (const waiting of entries) sum += waiting.floorMs;
  return sum;
}
