import { Errors, type CorepoolError } from '../common/app-error';

/**
 * Why the scheduler refused or shed a task: the `reason` label of the refusals
 * metric. `deadline`: the work ahead of it leaves it no time; `too-long`: its
 * own run time alone is longer than the time it has left.
 */
export type RefusalReason = 'deadline' | 'too-long' | 'queue-delay' | 'backstop';

export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'deadline',
  'too-long',
  'queue-delay',
  'backstop',
];

/** The estimates a time refusal rests on, in ms; said in the problem's detail. */
export interface RefusalEstimate {
  /** Work the threads have before this task could start. */
  readonly aheadMs: number;
  /** The task's own run time. */
  readonly ownMs: number;
  /** Time from now to the task's deadline. */
  readonly leftMs: number;
}

/**
 * The coded refusal a caller gets: 503 POOL_SATURATED with `Retry-After`
 * (`retryAfterMs` in whole seconds, 1 at least, `maxRetryAfterSeconds` at most).
 */
export function refusal(
  reason: RefusalReason,
  retryAfterMs: number,
  maxRetryAfterSeconds: number,
  estimate?: RefusalEstimate,
): CorepoolError {
  const seconds = Math.min(maxRetryAfterSeconds, Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return Errors.poolSaturated(seconds, reason, estimate && describe(reason, estimate));
}

/** "about 1.8 s of work ahead of it and 0.4 s of its own; 1.0 s left". */
function describe(reason: RefusalReason, { aheadMs, ownMs, leftMs }: RefusalEstimate): string {
  const own = `${duration(ownMs)} of its own`;
  const left = `${duration(Math.max(0, leftMs))} left`;
  if (reason === 'too-long') return `about ${own} as measured at this size; ${left}`;
  return `about ${duration(aheadMs)} of work ahead of it and ${own}; ${left}`;
}

/** Milliseconds below a second, tenths of seconds above. */
function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
