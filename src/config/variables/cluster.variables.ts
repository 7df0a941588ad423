import { IsIn, IsInt, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';
import { autoOrNumber, unlessAuto } from './conversions';

/** How the cluster's processes share the port (docs/adr/0010-kernel-distributes-connections.md). */
export const CLUSTER_SCHEDULING_POLICIES = ['kernel', 'round-robin'] as const;
export type ClusterSchedulingPolicy = (typeof CLUSTER_SCHEDULING_POLICIES)[number];

/** The HTTP processes the primary forks and how they share the port. */
export class ClusterVariables {
  /**
   * HTTP processes (cluster processes; the threads inside each are `POOL_THREADS`). `auto`: one per
   * usable core; `1` runs one process without forking (the mode for Kubernetes). Formerly
   * `CLUSTER_WORKERS`: that name is still read, with a warning at start, and both set to different
   * values is a configuration error (docs/adr/0049-threads-are-workers-processes-are-processes.md).
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(1)
  @Max(256)
  @IsInt({ message: 'CLUSTER_PROCESSES must be `auto` or a whole number' })
  CLUSTER_PROCESSES: number | 'auto' = 'auto';

  /**
   * How the cluster's processes share the port. `kernel`: every process accepts from the one
   * listening socket, so a connection is never handed to a process that has died. `round-robin`:
   * Node's default, the primary accepts and hands each connection on; one handed to a process as it
   * is killed hangs until the client gives up (docs/lifecycle.md).
   */
  @IsIn(CLUSTER_SCHEDULING_POLICIES)
  CLUSTER_SCHEDULING_POLICY: ClusterSchedulingPolicy = 'kernel';

  /**
   * V8's largest young-generation semi-space, in MiB, for each HTTP process the primary forks
   * (`--max-semi-space-size`, ADR 0024). Each scavenge stops the event loop for as long as it
   * copies what survived: a smaller young generation makes the pauses shorter and more frequent,
   * and costs small tasks throughput for the extra collections (the measurements are in the ADR).
   * `0`: V8's default, the default; 2 where the tail latency of small requests matters more than
   * their throughput. Not applied when `NODE_OPTIONS` sets `--max-semi-space-size`, nor with
   * `CLUSTER_PROCESSES=1` (no fork: set it in `NODE_OPTIONS` there).
   */
  @Type(() => Number)
  @Min(0)
  @Max(1024)
  @IsInt()
  CLUSTER_MAX_SEMI_SPACE_MB = 0;
}
