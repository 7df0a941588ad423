import { Errors, type AppError } from '../common/app-error';

/** Why the scheduler refused or shed a task: the `reason` label of the refusals metric. */
export type RefusalReason = 'deadline' | 'queue-delay' | 'backstop';

export const REFUSAL_REASONS: readonly RefusalReason[] = ['deadline', 'queue-delay', 'backstop'];

/** The coded refusal a caller gets: 503 POOL_SATURATED with the estimate as `Retry-After`. */
export function refusal(
  reason: RefusalReason,
  estimateMs: number,
  maxRetryAfterSeconds: number,
): AppError {
  const seconds = Math.min(maxRetryAfterSeconds, Math.max(1, Math.ceil(estimateMs / 1000)));
  return Errors.poolSaturated(seconds, reason);
}
