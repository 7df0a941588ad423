import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { THREAD_REPLACE_CAUSES, type PoolStats, type TaskStopKind } from '@corepool/core';
import { WorkerPoolService } from '@corepool/nestjs';
import { freshMetric } from './metric-registry';

const STOP_KINDS: readonly TaskStopKind[] = ['cooperative', 'terminated'];

/** Thread start (spawn → code loaded): milliseconds on an idle machine, seconds when starved (ADR 0050). */
const THREAD_START_BUCKETS = [0.01, 0.025, 0.04, 0.06, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The pool's state, read from `WorkerPoolService.stats()` at scrape time.
 * `aggregator` says how the cluster primary combines processes: threads and
 * queues add up; utilization is the mean share of busy threads (every process
 * has the same number of threads).
 */
@Injectable()
export class PoolMetricsService implements OnModuleDestroy {
  private readonly threadStartSeconds = freshMetric(
    'compute_pool_thread_start_seconds',
    () =>
      new Histogram({
        name: 'compute_pool_thread_start_seconds',
        help: 'Time from spawning a worker thread to its task code loaded',
        buckets: THREAD_START_BUCKETS,
      }),
  );
  /** From construction, before the pool starts its first threads (in its own onModuleInit). */
  private readonly unsubscribe: () => void;

  constructor(private readonly pool: WorkerPoolService) {
    this.unsubscribe = pool.onThreadStarted((startMs) =>
      this.threadStartSeconds.observe(startMs / 1000),
    );
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
    freshMetric(
      'compute_pool_threads_replaced_total',
      () =>
        new Counter({
          name: 'compute_pool_threads_replaced_total',
          help: 'Worker threads replaced, by cause: crash, out_of_memory, terminated (a cancelled task past its grace), recycled_tasks, recycled_memory',
          labelNames: ['cause'],
          aggregator: 'sum',
          collect() {
            this.reset();
            const { threadsReplaced } = stats();
            for (const cause of THREAD_REPLACE_CAUSES) this.inc({ cause }, threadsReplaced[cause]);
          },
        }),
    );
    freshMetric(
      'compute_tasks_stopped_total',
      () =>
        new Counter({
          name: 'compute_tasks_stopped_total',
          help: 'Cancelled tasks that had reached a thread, by how they stopped: cooperative (on their own, the thread kept) or terminated (with their thread, past the grace)',
          labelNames: ['how'],
          aggregator: 'sum',
          collect() {
            this.reset();
            const { tasksStopped } = stats();
            for (const how of STOP_KINDS) this.inc({ how }, tasksStopped[how]);
          },
        }),
    );
  }

  onModuleDestroy(): void {
    this.unsubscribe();
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
