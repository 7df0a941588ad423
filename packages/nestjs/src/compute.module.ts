import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ConfigurableModuleClass } from './compute.module-definition';
import { PoolHealthIndicator } from './pool-health.indicator';
import { PoolMetrics } from './pool-metrics';
import { WorkerPoolService } from './worker-pool.service';

/**
 * corepool's pool in a Nest application: `WorkerPoolService` to inject,
 * `PoolHealthIndicator` for Terminus, the pool's metrics in the Prometheus
 * registry and its errors answered over HTTP (`httpErrors: false` leaves
 * them to the app). Global by default (`isGlobal: false` to scope it).
 *
 * ```ts
 * @Module({ imports: [ComputeModule.forRoot({ tasks: [join(__dirname, 'tasks.js')], threads: 2 })] })
 * export class AppModule {}
 * ```
 */
@Module({
  imports: [TerminusModule],
  providers: [WorkerPoolService, PoolHealthIndicator, PoolMetrics],
  exports: [WorkerPoolService, PoolHealthIndicator],
})
export class ComputeModule extends ConfigurableModuleClass {}
