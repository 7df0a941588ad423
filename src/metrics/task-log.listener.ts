import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { WorkerPoolService } from '../workers/worker-pool.service';

/**
 * One debug line per finished task: task, outcome, wait and run time, and the
 * id of the request that ran it (`reqId`, as on that request's own lines).
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
    this.unsubscribe = this.pool.onSettled(({ task, requestId, outcome, waitMs, runMs, error }) => {
      // Every task settles here; below debug, skip building the line at all.
      if (!this.logger.logger.isLevelEnabled('debug')) return;
      this.logger.debug(
        { reqId: requestId, task, outcome, waitMs, runMs, code: error?.code },
        'task finished',
      );
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}
