import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';
import { autoOrNumber, unlessAuto } from './conversions';

/** The worker threads of each process, the tasks they load and how a task ends. */
export class PoolVariables {
  /**
   * Worker threads per process. `auto`: usable cores ÷ processes, at least 1. `0` runs tasks inline
   * on the event loop (for comparison only).
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(1024)
  @IsInt({ message: 'POOL_THREADS must be `auto` or a whole number' })
  POOL_THREADS: number | 'auto' = 'auto';

  /**
   * Tasks waiting per process, a memory backstop (the scheduler admits by time); past it: 503
   * `POOL_SATURATED` (reason `backstop`). `auto`: as many as a sixteenth of the process's memory
   * holds at 16 KiB each (the container's limit, else the machine's, shared among
   * `CLUSTER_PROCESSES`), at least 128 per thread.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(1_000_000)
  @IsInt({ message: 'POOL_MAX_QUEUE must be `auto` or a whole number' })
  POOL_MAX_QUEUE: number | 'auto' = 'auto';

  /**
   * Deadline per task, counted from the request's arrival (queue time included); past it: 504
   * `TASK_TIMEOUT`.
   */
  @Type(() => Number)
  @Min(1)
  @Max(86_400_000)
  @IsInt()
  TASK_TIMEOUT_MS = 30_000;

  /**
   * Recycle a thread after about this many tasks (each thread draws its share within ±20 %, so
   * threads do not all recycle at once); its replacement is started first and the old thread
   * retires only once the new one has loaded its code. `0` never does.
   */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  WORKER_MAX_TASKS = 0;

  /**
   * How long a cancelled task (deadline, client gone, job cancelled, shutdown) has to notice and
   * return before its thread is terminated. `0`: terminate at once.
   */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  CANCEL_GRACE_MS = 300;

  /**
   * Added to the threads' nice value with their first task, once they have started, so the event
   * loop wins the CPU. Linux only; elsewhere ignored with a warning.
   */
  @Type(() => Number)
  @Min(0)
  @Max(19)
  @IsInt()
  WORKER_NICE_INCREMENT = 19;

  /**
   * Extra task modules, comma-separated paths, loaded next to the built-in tasks in the main thread
   * and every worker thread (see docs/tasks.md).
   */
  @IsOptional()
  @IsString()
  TASK_MODULES?: string;
}
