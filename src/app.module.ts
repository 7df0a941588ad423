import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';
import { ComputeModule } from './compute/compute.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { HealthModule } from './health/health.module';
import { collectAfterBursts } from './http/collect-after-burst';
import { BodyMemoryBudget } from './http/body-memory-budget';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { JobsModule } from './jobs/jobs.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { WorkersModule } from './workers/workers.module';

@Module({})
export class AppModule {
  /**
   * main.ts passes the configuration it loaded from the environment, tests their
   * own; the root logger is Fastify's too, so createApp makes it first.
   */
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    // One budget per process: the body hooks fill it, the metrics read it.
    const budget = new BodyMemoryBudget(config.http.bodyMemoryBudgetBytes);
    collectAfterBursts(budget);
    return {
      module: AppModule,
      global: true,
      providers: [{ provide: BodyMemoryBudget, useValue: budget }],
      exports: [BodyMemoryBudget],
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        WorkersModule,
        LifecycleModule,
        ComputeModule,
        HealthModule,
        MetricsModule,
        JobsModule.forRoot(config),
      ],
    };
  }
}
