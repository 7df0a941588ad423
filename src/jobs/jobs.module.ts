import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { AppConfig } from '../config/app-config';
import { WorkersModule } from '../workers/workers.module';
import { configuredProcessor } from './bull-job.processor';
import { BullJobStore } from './bull-job-store';
import { JOBS_QUEUE } from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { JobExecutor } from './job-executor.service';
import { JobStore } from './job-store';
import { JobsController } from './jobs.controller';
import { MemoryJobStore } from './memory-job-store';
import { producerOptions } from './redis-options';

/**
 * Asynchronous jobs. The backend is chosen once, at start: without
 * `REDIS_URL`, the in-process store; with it, BullMQ on Redis, shared by
 * every replica that uses the same Redis and `JOBS_QUEUE_PREFIX`.
 */
@Module({})
export class JobsModule {
  static forRoot(config: AppConfig): DynamicModule {
    const { redisUrl } = config.jobs;
    const base = {
      module: JobsModule,
      imports: [WorkersModule],
      controllers: [JobsController],
    };
    if (redisUrl === undefined) {
      const providers: Provider[] = [JobExecutor, { provide: JobStore, useClass: MemoryJobStore }];
      return { ...base, providers };
    }
    const { queuePrefix, attempts, backoffMs, resultTtlSeconds } = config.jobs;
    return {
      ...base,
      imports: [
        WorkersModule,
        BullModule.registerQueue({
          name: JOBS_QUEUE,
          prefix: queuePrefix,
          connection: producerOptions(redisUrl),
          defaultJobOptions: {
            attempts,
            backoff: { type: 'exponential', delay: backoffMs },
            removeOnComplete: { age: resultTtlSeconds },
            removeOnFail: { age: resultTtlSeconds },
          },
        }),
      ],
      providers: [
        JobExecutor,
        CancelSignals,
        { provide: JobStore, useClass: BullJobStore },
        configuredProcessor(config),
      ],
    };
  }
}
