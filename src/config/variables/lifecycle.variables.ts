import { IsInt, IsNumber, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';
import { autoOrNumber, unlessAuto, offOrNumber, unlessOff } from './conversions';

/** Readiness and shutdown (docs/lifecycle.md). */
export class LifecycleVariables {
  /**
   * `off` (the default): a busy pool never fails readiness, since every replica behind one load
   * balancer saturates together and failing them all empties the Service
   * (docs/adr/0043-readiness-means-can-serve.md); admission answers the excess with 503
   * `POOL_SATURATED` and the autoscaler adds replicas. A share of `POOL_MAX_QUEUE`: readiness also
   * fails when the queue is this full, and recovers when it is down to half of that, for load
   * balancers that send a removed replica's traffic to replicas with room.
   */
  @offOrNumber()
  @unlessOff()
  @Min(0.05)
  @Max(1)
  @IsNumber(
    { allowNaN: false, allowInfinity: false },
    { message: 'READY_QUEUE_HIGH_WATER must be `off` or a number' },
  )
  READY_QUEUE_HIGH_WATER: number | 'off' = 'off';

  /**
   * Readiness fails while tasks wait and none has started on a thread for this long: a wedged pool
   * (threads stuck in tasks that ignore their deadline). `auto`: `TASK_TIMEOUT_MS` +
   * `CANCEL_GRACE_MS` + 10 s, so threads that all run to their deadline are not taken for wedged.
   * `0`: never.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(86_400_000)
  @IsInt({ message: 'READY_PROGRESS_TIMEOUT_MS must be `auto` or a whole number' })
  READY_PROGRESS_TIMEOUT_MS: number | 'auto' = 'auto';

  /**
   * Readiness fails past this event-loop delay (p99 over the last second): every request on the
   * process waits that long before its first line of code runs.
   */
  @Type(() => Number)
  @Min(1)
  @IsInt()
  READY_MAX_EVENT_LOOP_DELAY_MS = 200;

  /** On SIGTERM, keep serving (readiness failing) this long before closing the listener. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  SHUTDOWN_DELAY_MS = 0;

  /**
   * Drain budget after `SHUTDOWN_DELAY_MS`; past it, what is left is cancelled and the exit code is
   * `3`.
   */
  @Type(() => Number)
  @Min(100)
  @IsInt()
  SHUTDOWN_TIMEOUT_MS = 25_000;
}
