import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { WorkerPoolService } from '@corepool/nestjs';

/**
 * One debug line per finished task: task, outcome, wait and run time, and the
 * id of the request that ran it (`reqId`, as on that request's own lines)
 * and, when it is traced, its trace and scheduler span ids.
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
    this.unsubscribe = this.pool.onSettled((settled) => {
      // Every task settles here; below debug, skip building the line at all.
      if (!this.logger.logger.isLevelEnabled('debug')) return;
      const { task, requestId, outcome, waitMs, runMs, error, traceId, spanId } = settled;
      this.logger.debug(
        // `trace_id`/`span_id` (OpenTelemetry's names in logs) only on a traced task's line.
        {
          reqId: requestId,
          task,
          outcome,
          waitMs,
          runMs,
          code: error?.code,
          trace_id: traceId,
          span_id: spanId,
        },
        'task finished',
      );
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}
