import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { AppConfig } from '../config/app-config';
import { TaskRegistry } from '../tasks/task-registry';
import { WorkerPoolService, type TaskOutcome } from '../workers/worker-pool.service';
import { freshMetric } from './metric-registry';
import { taskBuckets } from './task-buckets';

const OUTCOMES: readonly TaskOutcome[] = [
  'success',
  'failed',
  'timeout',
  'rejected',
  'cancelled',
  'crashed',
];

/** Counts and times every task the pool settles, whatever its outcome and whoever ran it. */
@Injectable()
export class TaskMetricsService implements OnModuleInit, OnModuleDestroy {
  private readonly tasks = freshMetric(
    'compute_tasks_total',
    () =>
      new Counter({
        name: 'compute_tasks_total',
        help: 'Tasks settled, by task and outcome (success, failed, timeout, rejected, cancelled, crashed)',
        labelNames: ['task', 'outcome'],
      }),
  );
  private readonly runSeconds = freshMetric(
    'compute_task_run_seconds',
    () =>
      new Histogram({
        name: 'compute_task_run_seconds',
        help: 'Time a task ran on its thread',
        labelNames: ['task'],
        buckets: taskBuckets(this.config.pool.taskTimeoutMs),
      }),
  );
  private readonly waitSeconds = freshMetric(
    'compute_task_wait_seconds',
    () =>
      new Histogram({
        name: 'compute_task_wait_seconds',
        help: 'Time a task waited for a thread, from the request arrival',
        labelNames: ['task'],
        buckets: taskBuckets(this.config.pool.taskTimeoutMs),
      }),
  );
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly config: AppConfig,
    registry: TaskRegistry,
    private readonly pool: WorkerPoolService,
  ) {
    // Every series exists from the start, at 0: rate() sees the first failure,
    // and dashboards show an outcome that never happened as 0, not as "no data".
    for (const { name } of registry.list()) {
      for (const outcome of OUTCOMES) this.tasks.inc({ task: name, outcome }, 0);
    }
  }

  onModuleInit(): void {
    this.unsubscribe = this.pool.onSettled(({ task, outcome, waitMs, runMs }) => {
      this.tasks.inc({ task, outcome });
      if (waitMs !== undefined) this.waitSeconds.observe({ task }, waitMs / 1000);
      if (runMs !== undefined) this.runSeconds.observe({ task }, runMs / 1000);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}
