import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { WorkersModule } from '../workers/workers.module';
import { EventLoopHealthIndicator } from './event-loop.health';
import { HealthController } from './health.controller';
import { JobStoreHealthIndicator } from './job-store.health';
import { ProcessMemoryHealthIndicator } from './process-memory.health';
import { ShutdownHealthIndicator } from './shutdown.health';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), WorkersModule],
  controllers: [HealthController],
  // The pool's indicator (`PoolHealthIndicator`) comes with the engine's module (WorkersModule).
  providers: [
    EventLoopHealthIndicator,
    ShutdownHealthIndicator,
    ProcessMemoryHealthIndicator,
    JobStoreHealthIndicator,
  ],
})
export class HealthModule {}
