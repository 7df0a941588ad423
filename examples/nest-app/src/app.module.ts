import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { ComputeModule } from '@corepool/nestjs';
import { AppController } from './app.controller';
import { HealthController } from './health.controller';

/**
 * The threads load the compiled task file (`nest build` writes it to
 * dist/tasks/). Resolved from the project root, so that the same path holds
 * when the app runs from dist/ and when jest runs it from src/.
 */
const TASKS = join(__dirname, '..', 'dist', 'tasks', 'hash-chain.task.js');

@Module({
  imports: [
    ComputeModule.forRoot({
      tasks: [TASKS],
      threads: Number(process.env.POOL_THREADS ?? 2),
    }),
    TerminusModule,
    // Serves GET /metrics from prom-client's default registry, where the pool's metrics are.
    PrometheusModule.register(),
  ],
  controllers: [AppController, HealthController],
})
export class AppModule {}
