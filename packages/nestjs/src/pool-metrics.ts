import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { REFUSAL_REASONS, type TaskSettled } from '@corepool/core';
import { Counter, Gauge, Histogram, register, type Registry } from 'prom-client';
import type { ComputeModuleOptions } from './compute-module-options';
import { COMPUTE_MODULE_OPTIONS } from './compute.module-definition';
import { WorkerPoolService } from './worker-pool.service';

/** Seconds: a tiny task's thread time up to a long report's. */
const TASK_SECONDS_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 120];

/**
 * The pool's metrics, in the application's Prometheus registry (prom-client's
 * default, which `@willsoto/nestjs-prometheus` serves at `/metrics`), under
 * the names the corepool service uses: the pool's state read at each scrape,
 * and every settled task counted by task and outcome.
 */
@Injectable()
export class PoolMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly registry: Registry | undefined;
  private readonly prefix: string;
  private readonly registered: string[] = [];
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly pool: WorkerPoolService,
    @Inject(COMPUTE_MODULE_OPTIONS) options: ComputeModuleOptions,
  ) {
    this.registry = options.metrics === false ? undefined : (options.metrics?.registry ?? register);
    this.prefix = (options.metrics === false ? undefined : options.metrics?.prefix) ?? '';
  }

  onModuleInit(): void {
    const registry = this.registry;
    if (registry === undefined) return;
    const pool = this.pool;
    const name = (suffix: string) => {
      const full = `${this.prefix}compute_${suffix}`;
      this.registered.push(full);
      return full;
    };
    const gauge = (suffix: string, help: string, read: () => number) =>
      new Gauge({
        name: name(suffix),
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    gauge('pool_threads', 'Worker threads alive', () => pool.stats().threads);
    gauge('pool_queue_size', 'Tasks waiting for a thread', () => pool.stats().queueSize);
    gauge(
      'pool_queue_limit',
      'Tasks that may wait at most (a memory bound)',
      () => pool.stats().maxQueue,
    );
    gauge('pool_utilization', 'Share of threads busy, 0..1', () => pool.stats().utilization);
    new Counter({
      name: name('pool_thread_restarts_total'),
      help: 'Threads replaced after dying (crash, memory, stopped past the grace)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(pool.stats().threadRestarts);
      },
    });
    new Counter({
      name: name('scheduler_refusals_total'),
      help: 'Tasks refused before running or shed while waiting, by reason',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        const refusals = pool.stats().scheduler?.refusals;
        this.reset();
        for (const reason of REFUSAL_REASONS) this.inc({ reason }, refusals?.[reason] ?? 0);
      },
    });
    const tasks = new Counter({
      name: name('tasks_total'),
      help: 'Tasks settled, by task and outcome',
      labelNames: ['task', 'outcome'],
      registers: [registry],
    });
    const runSeconds = new Histogram({
      name: name('task_run_seconds'),
      help: 'Time a task ran on its thread',
      labelNames: ['task'],
      buckets: TASK_SECONDS_BUCKETS,
      registers: [registry],
    });
    const waitSeconds = new Histogram({
      name: name('task_wait_seconds'),
      help: 'Time a task waited for a thread',
      labelNames: ['task'],
      buckets: TASK_SECONDS_BUCKETS,
      registers: [registry],
    });
    this.unsubscribe = pool.onSettled((settled: TaskSettled) => {
      tasks.inc({ task: settled.task, outcome: settled.outcome });
      if (settled.runMs !== undefined)
        runSeconds.observe({ task: settled.task }, settled.runMs / 1000);
      if (settled.waitMs !== undefined)
        waitSeconds.observe({ task: settled.task }, settled.waitMs / 1000);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    for (const metric of this.registered) this.registry?.removeSingleMetric(metric);
  }
}
