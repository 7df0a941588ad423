import type { ComputeModuleOptions } from '@corepool/nestjs';
import type { AppConfig } from '../config/app-config';
import { builtInTasks } from '../tasks';
import { serviceThreadFile } from './thread-file';

/**
 * The engine's options from the service's configuration: every value the
 * environment sets (docs/configuration.md names each variable), the built-in
 * tasks, and the threads' bundled entry (`thread-file.ts`).
 */
export function poolOptionsFrom(config: AppConfig): ComputeModuleOptions {
  const { pool, scheduler, readiness } = config;
  // The service's pool settings are the engine's own (`PoolSettings['pool']`).
  const { taskModules, ...poolLimits } = pool;
  return {
    ...poolLimits,
    tasks: taskModules,
    preloadedTasks: builtInTasks,
    threadFile: serviceThreadFile(),
    // The edge checks every input before it asks for a run (task routes, job submissions).
    validateInput: false,
    closeTimeoutMs: config.shutdown.timeoutMs,
    scheduler: {
      targetDelayMs: scheduler.targetDelayMs,
      intervalMs: scheduler.intervalMs,
      costPriorMs: scheduler.costPriorMs,
      jobsMaxThreads: scheduler.jobsMaxThreads,
      batchMaxTasks: scheduler.batchMaxTasks,
      batchMaxMs: scheduler.batchMaxMs,
    },
    health: {
      progressTimeoutMs: readiness.progressTimeoutMs,
      queueHighWater: readiness.queueHighWater,
    },
    metrics: false,
  };
}
