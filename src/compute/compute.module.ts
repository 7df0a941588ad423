import { Module } from '@nestjs/common';
import { WorkersModule } from '../workers/workers.module';
import { ComputeController } from './compute.controller';
import { TaskCatalogService } from './task-catalog.service';
import { TaskInvokerService } from './task-invoker.service';
import { TasksController } from './tasks.controller';

@Module({
  imports: [WorkersModule],
  controllers: [TasksController, ComputeController],
  providers: [TaskCatalogService, TaskInvokerService],
  exports: [TaskCatalogService, TaskInvokerService],
})
export class ComputeModule {}
