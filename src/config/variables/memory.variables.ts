import { IsInt, Max, Min } from 'class-validator';
import { autoOrNumber, unlessAuto } from './conversions';

/** Memory limits of threads and request bodies; `auto` sizes them from the container (ADR 0044). */
export class MemoryVariables {
  /**
   * V8 heap cap per thread (MB); a task that exhausts it gets 500 `WORKER_OUT_OF_MEMORY` and its
   * thread is replaced. `auto`: half of the thread's `WORKER_MAX_MEMORY_MB` share of the usable
   * memory (the container's limit, else the machine's), at most 1024, so that a runaway task fails
   * within seconds (docs/adr/0044-memory-defaults-from-the-container.md).
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(16)
  @Max(65_536)
  @IsInt({ message: 'WORKER_MAX_OLD_GENERATION_MB must be `auto` or a whole number' })
  WORKER_MAX_OLD_GENERATION_MB: number | 'auto' = 'auto';

  /**
   * Recycle a thread, as for `WORKER_MAX_TASKS`, when its V8 heap in use after a task exceeds this
   * many MB: slow growth is shed before the heap cap fails a task. `auto`: 75 % of
   * `WORKER_MAX_OLD_GENERATION_MB`; `0` never.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(65_536)
  @IsInt({ message: 'WORKER_RECYCLE_HEAP_MB must be `auto` or a whole number' })
  WORKER_RECYCLE_HEAP_MB: number | 'auto' = 'auto';

  /**
   * Bytes of memory the service may use, which every memory `auto` value is derived from
   * (docs/adr/0044-memory-defaults-from-the-container.md). `auto`: the container's cgroup limit,
   * else the machine's memory. A number smaller than that is used instead: a limit the cgroup does
   * not show (a pod's sidecars, a machine shared with other services), or a test that plays a
   * container's limit.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(67_108_864)
  @Max(1_125_899_906_842_624)
  @IsInt({ message: 'MEMORY_LIMIT_BYTES must be `auto` or a whole number' })
  MEMORY_LIMIT_BYTES: number | 'auto' = 'auto';

  /**
   * Memory one thread may use while it runs a task, V8 heap and external memory (buffers, typed
   * arrays) together, sampled every 50 ms; a task over it is stopped with 500
   * `WORKER_OUT_OF_MEMORY` and its thread replaced. `auto`: derived so that the worst mix the
   * service admits stays within 85 % of the usable memory (`MEMORY_LIMIT_BYTES`: the container's
   * cgroup limit, else the machine's): each process's part, less its base and its body budget,
   * shared by its threads, between 64 and 2048; `0`: not watched.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(1_048_576)
  @IsInt({ message: 'WORKER_MAX_MEMORY_MB must be `auto` or a whole number' })
  WORKER_MAX_MEMORY_MB: number | 'auto' = 'auto';

  /**
   * Bytes of request bodies a process holds at once (being received, queued or on a thread); a body
   * that would pass it gets 503 `POOL_SATURATED` (reason `memory`) at once, from its
   * `Content-Length` or as soon as a chunked body crosses it. `auto`: a tenth of what a process's
   * part of 85 % of the usable memory (`MEMORY_LIMIT_BYTES`, shared among `CLUSTER_PROCESSES`)
   * leaves beyond its base, at most 256 MiB, and at least `BINARY_BODY_LIMIT_BYTES`
   * (docs/adr/0044-memory-defaults-from-the-container.md). An explicit value must be at least
   * `BINARY_BODY_LIMIT_BYTES`.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(1024)
  @Max(1_099_511_627_776)
  @IsInt({ message: 'BODY_MEMORY_BUDGET_BYTES must be `auto` or a whole number' })
  BODY_MEMORY_BUDGET_BYTES: number | 'auto' = 'auto';
}
