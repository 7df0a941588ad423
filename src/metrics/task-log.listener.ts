import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { WorkerPoolService } from '../workers/worker-pool.service';

/**
 * One debug line per finished task: task, outcome, wait and run time. The
 * pool reports a task while the request that ran it is still the current
 * async context, so nestjs-pino's logger puts that request's id on the line.
 */
@Injectable()
export class TaskLogListener implements OnModuleInit, OnModuleDestroy {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly logger: PinoLogger,
    private readonly pool: WorkerPoolService,
  ) {
    logger.setContext(TaskLogListener.name);
  }

  onModuleInit(): void {
    this.unsubscribe = this.pool.onSettled(({ task, outcome, waitMs, runMs, error }) => {
      this.logger.debug({ task, outcome, waitMs, runMs, code: error?.code }, 'task finished');
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}
