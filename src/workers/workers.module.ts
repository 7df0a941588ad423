import { Module } from '@nestjs/common';
import { TaskRegistry } from '@corepool/core';
import { ComputeModule, WorkerPoolService } from '@corepool/nestjs';
import { AppConfig } from '../config/app-config';
import { poolOptionsFrom } from './pool-options';

/**
 * The engine (`@corepool/nestjs`'s `ComputeModule`) with the service's
 * configuration: its options come from the environment, its tasks are the
 * built-in ones plus `TASK_MODULES`. The service answers errors with its own
 * table (`src/http/error-table.ts`) and serves its own metrics, cluster-wide
 * (`src/metrics/`), so the module's filter and metrics are off.
 */
@Module({
  imports: [
    ComputeModule.forRootAsync({
      inject: [AppConfig],
      useFactory: poolOptionsFrom,
      isGlobal: false,
      httpErrors: false,
    }),
  ],
  providers: [
    {
      provide: TaskRegistry,
      useFactory: (pool: WorkerPoolService) => pool.tasks,
      inject: [WorkerPoolService],
    },
  ],
  exports: [ComputeModule, TaskRegistry],
})
export class WorkersModule {}
