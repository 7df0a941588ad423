import { Module } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { WorkersModule } from '../workers/workers.module';
import { BodyMetricsService } from './body-metrics.service';
import { ClusterScrapeModule } from './cluster-scrape.module';
import { HttpMetricsService } from './http-metrics.service';
import { collectProcessMetrics } from './metric-registry';
import { MetricsController } from './metrics.controller';
import { PoolMetricsService } from './pool-metrics.service';
import { SchedulerMetricsService } from './scheduler-metrics.service';
import { TaskLogListener } from './task-log.listener';
import { TaskMetricsService } from './task-metrics.service';
import { TracingMetricsService } from './tracing-metrics.service';

/**
 * Prometheus metrics (`GET /metrics`): HTTP, task and pool metrics plus
 * prom-client's process metrics, in prom-client's default registry, so that
 * metrics other modules register there are served too. Under the cluster
 * module a scrape covers every process (see cluster-metrics.primary.ts).
 */
@Module({
  imports: [
    // Default metrics are started by collectProcessMetrics(), once per process
    // and with the process label; the module would start them per application.
    PrometheusModule.registerAsync({
      imports: [ClusterScrapeModule],
      controller: MetricsController,
      useFactory: () => ({ defaultMetrics: { enabled: false } }),
    }),
    WorkersModule,
  ],
  providers: [
    BodyMetricsService,
    HttpMetricsService,
    PoolMetricsService,
    SchedulerMetricsService,
    TaskMetricsService,
    TaskLogListener,
    TracingMetricsService,
  ],
})
export class MetricsModule {
  constructor() {
    collectProcessMetrics();
  }
}
