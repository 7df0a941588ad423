import type { LoadReport } from './cluster-messages';

/** What the primary asks of the busiest process when the shares drift apart. */
export interface Rebalance {
  /** The process (its id in `cluster`) that makes room. */
  readonly id: number;
  /** The share of its connections that move. */
  readonly fraction: number;
  /** `tasks`: its tasks wait for a thread (ADR 0027); `answers`: it answers too many requests (ADR 0018). */
  readonly reason: 'tasks' | 'answers';
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
 * Watches each process's load reports and names the busiest one when it
 * carries far more than its fair share. With the kernel dealing connections
 * nothing else evens them out: a connection closed by the age bound lands
 * wherever the kernel puts it. Asked to make room, the busiest process
 * moves the share of its connections it has above the mean, while it does
 * not accept.
 *
 * Tasks come first (ADR 0027): tasks waiting for a thread in one process
 * while another has a thread to spare is capacity lost, and it shows
 * with few, long tasks — 4 connections of 40 ms tasks on 2 processes are 50
 * answers a second at best, and when one process holds all 4, its thread
 * answers half that, too few for the count of answers to tell from noise.
 * Answers (ADR 0018) cover the light routes, where no task runs.
 */
export class ShareWatch {
  private readonly reports = new Map<number, LoadReport>();

  constructor(private readonly options: ShareWatchOptions = DEFAULT_SHARE_WATCH) {}

  /** A process's report: requests answered since its last one, mean tasks in flight per thread. */
  record(id: number, report: LoadReport): void {
    this.reports.set(id, report);
  }

  /** Forgets a process that left. */
  forget(id: number): void {
    this.reports.delete(id);
  }

  /**
   * The process to make room among `serving` (each must have reported), or
   * undefined when the shares are near enough, or too few answers to tell.
   * Every report is used once: the next decision waits for fresh ones.
   */
  decide(serving: readonly number[]): Rebalance | undefined {
    if (serving.length < 2 || !serving.every((id) => this.reports.has(id))) return undefined;
    const reports = serving.map((id) => ({ id, ...this.reports.get(id)! }));
    this.reports.clear();
    // Connections move only toward a process with a thread to spare (less than one task
    // per thread): while every thread is busy, a move gains nothing, makes clients
    // reconnect, and during its hold a crowd's new connections all go elsewhere (ADR 0057).
    const spareBesides = (busiest: number) =>
      reports.some(({ id, tasksPerThread }) => id !== busiest && tasksPerThread < 1);
    // More than one task per thread on average: some waited for a thread.
    const byTasks = this.aboveShare(
      reports.map(({ id, tasksPerThread }) => ({ id, value: tasksPerThread })),
      1,
    );
    if (byTasks !== undefined) {
      return spareBesides(byTasks.id) ? { ...byTasks, reason: 'tasks' } : undefined;
    }
    const total = reports.reduce((sum, { answered }) => sum + answered, 0);
    if (total < this.options.minAnswers) return undefined;
    const byAnswers = this.aboveShare(
      reports.map(({ id, answered }) => ({ id, value: answered })),
      0,
    );
    return byAnswers === undefined || !spareBesides(byAnswers.id)
      ? undefined
      : { ...byAnswers, reason: 'answers' };
  }

  /** The busiest, if above `floor` and past its ratio of the mean, with the fraction above the mean. */
  private aboveShare(
    values: ReadonlyArray<{ id: number; value: number }>,
    floor: number,
  ): { id: number; fraction: number } | undefined {
    const mean = values.reduce((sum, { value }) => sum + value, 0) / values.length;
    const busiest = values.reduce((a, b) => (b.value > a.value ? b : a));
    if (busiest.value <= floor || busiest.value <= mean * this.options.maxShareRatio) {
      return undefined;
    }
    return { id: busiest.id, fraction: (busiest.value - mean) / busiest.value };
  }
}
