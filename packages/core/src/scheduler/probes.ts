import type { CostModel } from './cost-model';
import { costKeyOf, sizeClassOf } from './cost-model';
import type { Ticket } from './scheduler-types';

/**
 * How often an idle thread takes a task that its measured cost says cannot
 * finish in time: runs measured while the machine was busy must not keep a
 * size out for good (ADR 0041).
 */
export const PROBE_AFTER_MS = 10_000;

/**
 * Whether an idle thread may take a task although its measured cost says it
 * cannot finish: once per `PROBE_AFTER_MS` per task and size class, counted
 * from the class's newest run. The run that follows, finished or stopped at
 * its deadline, is measured like any other (ADR 0041).
 */
export class Probes {
  /** When each task's size class was last taken as a probe. */
  private readonly takenAt = new Map<string, number>();

  constructor(private readonly costs: CostModel) {}

  /** True, and counted, when this task may run as a probe now. */
  take(ticket: Ticket, now: number): boolean {
    if (this.waitFor(ticket, now) > 0) return false;
    this.takenAt.set(probeKey(ticket), now);
    return true;
  }

  /** Time until this task's size class may be probed again (0: now). */
  waitFor(ticket: Ticket, now: number): number {
    const lastRun =
      this.costs.lastRunAt(costKeyOf(ticket.task, ticket.costClass), ticket.size) ?? -Infinity;
    const lastProbe = this.takenAt.get(probeKey(ticket)) ?? -Infinity;
    return Math.max(0, Math.max(lastRun, lastProbe) + PROBE_AFTER_MS - now);
  }
}

/** Probes are counted per task, cost class and size class. */
function probeKey(ticket: Ticket): string {
  return `${costKeyOf(ticket.task, ticket.costClass)}\u0000${sizeClassOf(ticket.size)}`;
}
