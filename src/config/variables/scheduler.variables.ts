import { IsInt, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';

/** Admission by time and batches of small tasks (docs/overload.md). */
export class SchedulerVariables {
  /**
   * Queue delay the scheduler holds tasks near under sustained overload (CoDel's target): past it
   * for `SCHEDULER_INTERVAL_MS`, the newest waiting task runs first, and a task without a client
   * deadline that would wait longer than this plus its own run time gets 503 `POOL_SATURATED` (see
   * docs/overload.md).
   */
  @Type(() => Number)
  @Min(1)
  @Max(60_000)
  @IsInt()
  SCHEDULER_TARGET_DELAY_MS = 100;

  /**
   * How long the queue delay must stay above `SCHEDULER_TARGET_DELAY_MS` before the pool counts as
   * overloaded (CoDel's interval); it stays so until the queue empties.
   */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  SCHEDULER_INTERVAL_MS = 500;

  /**
   * Estimated run time of a task never measured yet, for admission by time; its first run replaces
   * it.
   */
  @Type(() => Number)
  @Min(0)
  @Max(86_400_000)
  @IsInt()
  SCHEDULER_COST_PRIOR_MS = 50;

  /**
   * Most small tasks a free thread takes in one message when several wait (one `postMessage`, one
   * wake-up and one answer for all of them; see
   * docs/adr/0023-small-tasks-go-to-threads-in-batches.md). `1`: one task per message.
   */
  @Type(() => Number)
  @Min(1)
  @Max(256)
  @IsInt()
  SCHEDULER_BATCH_MAX_TASKS = 8;

  /**
   * Estimated thread time of one batch, all its tasks together: only tasks estimated this short are
   * batched, and the first task of a batch waits about this long for its answer at most.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1_000)
  SCHEDULER_BATCH_MAX_MS = 2;
}
