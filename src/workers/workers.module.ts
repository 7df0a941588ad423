import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { TaskRegistry } from '../tasks/task-registry';
import { WorkerPoolService } from './worker-pool.service';

@Module({
  providers: [
    {
      provide: TaskRegistry,
      useFactory: (config: AppConfig) => TaskRegistry.load(config.pool.taskModules),
      inject: [AppConfig],
    },
    WorkerPoolService,
  ],
  exports: [TaskRegistry, WorkerPoolService],
})
export class WorkersModule {}
