import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { WorkerPoolService, type PoolStats } from '../workers/worker-pool.service';
import { freshMetric } from './metric-registry';

/**
 * The pool's state, read from `WorkerPoolService.stats()` at scrape time.
 * `aggregator` says how the cluster primary combines processes: threads and
 * queues add up; utilization is the mean share of busy threads (every process
 * has the same number of threads).
 */
@Injectable()
export class PoolMetricsService {
  constructor(private readonly pool: WorkerPoolService) {
    this.gauge('compute_pool_threads', 'Worker threads alive', 'sum', (s) => s.threads);
    this.gauge('compute_pool_queue_size', 'Tasks waiting for a thread', 'sum', (s) => s.queueSize);
    this.gauge(
      'compute_pool_queue_limit',
      'Tasks that may wait before new ones are rejected (POOL_MAX_QUEUE)',
      'sum',
      (s) => s.maxQueue,
    );
    this.gauge(
      'compute_pool_utilization',
      'Share of worker threads busy, 0..1',
      'average',
      (s) => s.utilization,
    );
    const stats = () => this.pool.stats();
    freshMetric(
      'compute_pool_thread_restarts_total',
      () =>
        new Counter({
          name: 'compute_pool_thread_restarts_total',
          help: 'Worker threads replaced after dying (crash, heap exhausted, deadline); recycling not included',
          aggregator: 'sum',
          // The pool keeps the count; the counter follows it.
          collect() {
            this.reset();
            this.inc(stats().threadRestarts);
          },
        }),
    );
  }

  private gauge(
    name: string,
    help: string,
    aggregator: 'sum' | 'average',
    read: (stats: PoolStats) => number,
  ): void {
    const stats = () => this.pool.stats();
    freshMetric(
      name,
      () =>
        new Gauge({
          name,
          help,
          aggregator,
          collect() {
            this.set(read(stats()));
          },
        }),
    );
  }
}
