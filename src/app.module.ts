import { Module, type DynamicModule } from '@nestjs/common';
import { ComputeModule } from './compute/compute.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { loadConfig } from './config/load-config';
import { HealthModule } from './health/health.module';
import { JobsModule } from './jobs/jobs.module';
import { LoggingModule } from './logging/logging.module';
import { WorkersModule } from './workers/workers.module';

@Module({})
export class AppModule {
  /** `config` defaults to the process environment; tests pass their own. */
  static forRoot(config: AppConfig = loadConfig(process.env)): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule,
        WorkersModule,
        ComputeModule,
        HealthModule,
        JobsModule.forRoot(config),
      ],
    };
  }
}
