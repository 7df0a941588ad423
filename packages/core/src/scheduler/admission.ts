import type { CostEstimate } from './cost-model';
import type { RefusalEstimate } from './refusal';

/** What the admission of one task rests on, as the scheduler sees it on its arrival. */
export interface AdmissionFacts {
  readonly estimate: CostEstimate;
  /** Until its deadline (ms). */
  readonly leftMs: number;
  /** When it would start, by the floors of the work surely ahead (ms from now). */
  readonly waitFloorMs: number;
  /** Nothing surely ahead and a thread free: it would start at once. */
  readonly startsAtOnce: boolean;
  /** Overloaded (CoDel, on evidence), and nobody said how long its caller waits. */
  readonly shedsForDelay: boolean;
  readonly targetDelayMs: number;
  readonly slots: number;
  /** The queued work ahead of it by estimate (ms), asked only when shedding for delay. */
  queuedAheadMs(): number;
}

export type AdmissionVerdict =
  | { readonly reason: 'deadline'; readonly facts: RefusalEstimate }
  /** `probe`: an idle thread may still take it once in a while, so its size keeps being measured. */
  | { readonly reason: 'too-long'; readonly facts: RefusalEstimate; readonly probe: boolean }
  | { readonly reason: 'queue-delay'; readonly aheadMs: number };

/**
 * Admission by time, refusing only what cannot succeed (ADR 0041): a task is
 * refused at once when what surely lies ahead of it (its fair share of the
 * queue, and what the threads still have to do) plus what it surely costs
 * itself does not fit before its deadline: `deadline` when the work ahead is
 * what leaves it no time, `too-long` when its own cost alone is longer than
 * the time left. "Surely" is the cost model's floor: a size never measured
 * costs only what a smaller measured one did, so an uncertain estimate admits,
 * and the deadline still stops an overrun. While overloaded, a task without a
 * client deadline that would wait longer than the target plus its own run
 * time is refused too (`queue-delay`). Undefined: admitted.
 */
export function admissionVerdict(facts: AdmissionFacts): AdmissionVerdict | undefined {
  const { estimate, leftMs, waitFloorMs } = facts;
  if (waitFloorMs + estimate.floorMs > leftMs) {
    const known = { aheadMs: waitFloorMs, ownMs: estimate.floorMs, leftMs };
    if (facts.startsAtOnce) {
      // Nothing ahead: only its own runs can say it cannot finish, and any
      // deadline over the fastest of them can still be met.
      if (estimate.fastestMs <= leftMs) return undefined;
      return { reason: 'too-long', facts: { ...known, ownMs: estimate.fastestMs }, probe: true };
    }
    if (estimate.floorMs <= leftMs) return { reason: 'deadline', facts: known };
    return { reason: 'too-long', facts: known, probe: false };
  }
  if (!facts.shedsForDelay) return undefined;
  // Only the queued work counts here: waiting for a running task to end is
  // no queue's fault, and no shedding could shorten it.
  const aheadMs = facts.queuedAheadMs();
  return aheadMs / facts.slots > facts.targetDelayMs + estimate.ms
    ? { reason: 'queue-delay', aheadMs }
    : undefined;
}
