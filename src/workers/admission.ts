import { Errors, type AppError } from '../common/app-error';

/** What the pool knows when a task asks to be admitted. */
export interface AdmissionState {
  /** Tasks waiting for a thread, ahead of this one. */
  readonly queueSize: number;
}

/** How long a task that reached a thread waited and ran. */
export interface TaskTimes {
  readonly waitMs: number;
  readonly runMs: number;
}

/**
 * The seam where the pool decides whether a task may wait for a thread. The
 * pool asks `admit` before it queues a task and reports every task that ran
 * to `observe`; a refusal is a coded error with its facts (the retry
 * estimate). A scheduler that admits by time, delay or fair share plugs in
 * here in place of the queue bound.
 */
export interface AdmissionPolicy {
  /** Undefined to admit; otherwise the coded refusal the caller gets. */
  admit(state: AdmissionState): AppError | undefined;
  observe(times: TaskTimes): void;
}

export interface QueueBoundLimits {
  readonly threads: number;
  readonly maxQueue: number;
  readonly taskTimeoutMs: number;
}

/** How fast the smoothed times follow new measurements (exponential moving average). */
const SMOOTHING = 0.2;

/**
 * Admits while fewer than `maxQueue` tasks wait; refuses with POOL_SATURATED
 * and an estimate of when a slot is likely to be free, from recently measured
 * wait and run times rather than a constant.
 */
export class QueueBoundAdmission implements AdmissionPolicy {
  private observed = 0;
  private meanWaitMs = 0;
  private meanRunMs = 0;

  constructor(private readonly limits: QueueBoundLimits) {}

  admit({ queueSize }: AdmissionState): AppError | undefined {
    if (queueSize < this.limits.maxQueue) return undefined;
    return Errors.poolSaturated(this.retryAfterSeconds(queueSize));
  }

  observe({ waitMs, runMs }: TaskTimes): void {
    // The first measurement starts the averages, so the estimate is right from the first task.
    const alpha = this.observed === 0 ? 1 : SMOOTHING;
    this.observed += 1;
    this.meanWaitMs += alpha * (waitMs - this.meanWaitMs);
    this.meanRunMs += alpha * (runMs - this.meanRunMs);
  }

  /**
   * When a slot is likely to be free: the queue ahead of a new task, worked
   * off by every thread at the recently measured run time, or the recently
   * measured wait if that is longer. At least 1 s, at most the task timeout.
   */
  retryAfterSeconds(queueSize: number): number {
    const threads = Math.max(1, this.limits.threads);
    const queueMs = (queueSize * this.meanRunMs) / threads;
    const estimateMs = Math.max(queueMs, this.meanWaitMs) + this.meanRunMs;
    const maxSeconds = Math.ceil(this.limits.taskTimeoutMs / 1000);
    return Math.min(maxSeconds, Math.max(1, Math.ceil(estimateMs / 1000)));
  }
}
