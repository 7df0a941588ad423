/**
 * `@corepool/nestjs`: corepool's pool as a Nest module — `ComputeModule`,
 * `WorkerPoolService`, `PoolHealthIndicator`, its metrics and its errors.
 *
 * @packageDocumentation
 * @module \@corepool/nestjs
 */
export { ComputeModule } from './compute.module';
export { COMPUTE_MODULE_OPTIONS } from './compute.module-definition';
export type { ComputeModuleExtras, ComputeModuleOptions } from './compute-module-options';
export { WorkerPoolService } from './worker-pool.service';
export { PoolHealthIndicator } from './pool-health.indicator';
export { PoolMetrics } from './pool-metrics';
export { CorepoolExceptionFilter, DEFAULT_ERROR_STATUS } from './corepool-exception.filter';
// The core's names a Nest app meets, so one import serves.
export {
  CorepoolError,
  ErrorCode,
  defineTask,
  type PoolStats,
  type RunOptions,
  type TaskOutcome,
  type TaskResult,
  type TaskSettled,
  type TaskStopKind,
} from '@corepool/core';
