import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { TaskRegistry } from '@corepool/core';
import { WorkerPoolService, type TaskOutcome } from '@corepool/nestjs';
import { LabelledCounter, type CounterSeries } from './labelled-counter';
import { LabelledHistogram, type HistogramSeries } from './labelled-histogram';
import { registered } from './metric-registry';
import { taskBuckets } from './task-buckets';

const OUTCOMES: readonly TaskOutcome[] = [
  'success',
  'failed',
  'timeout',
  'rejected',
  'cancelled',
  'crashed',
];

/** One task's series, kept so that a settled task costs no label lookup. */
interface TaskSeries {
  readonly outcomes: Readonly<Record<TaskOutcome, CounterSeries>>;
  readonly waitSeconds: HistogramSeries;
  readonly runSeconds: HistogramSeries;
}

/** Counts and times every task the pool settles, whatever its outcome and whoever ran it. */
@Injectable()
export class TaskMetricsService implements OnModuleInit, OnModuleDestroy {
  private readonly tasks = registered(
    new LabelledCounter(
      'compute_tasks_total',
      'Tasks settled, by task and outcome (success, failed, timeout, rejected, cancelled, crashed)',
      ['task', 'outcome'],
    ),
  );
  private readonly runSeconds = registered(
    new LabelledHistogram(
      'compute_task_run_seconds',
      'Time a task ran on its thread',
      ['task'],
      taskBuckets(this.config.pool.taskTimeoutMs),
    ),
  );
  private readonly waitSeconds = registered(
    new LabelledHistogram(
      'compute_task_wait_seconds',
      'Time a task waited for a thread, from the request arrival',
      ['task'],
      taskBuckets(this.config.pool.taskTimeoutMs),
    ),
  );
  private readonly byTask = new Map<string, TaskSeries>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly config: AppConfig,
    registry: TaskRegistry,
    private readonly pool: WorkerPoolService,
  ) {
    // Every series exists from the start, at 0: rate() sees the first failure,
    // and dashboards show an outcome that never happened as 0, not as "no data".
    for (const { name } of registry.list()) this.seriesOf(name);
  }

  onModuleInit(): void {
    this.unsubscribe = this.pool.onSettled(({ task, outcome, waitMs, runMs, traceId, spanId }) => {
      const series = this.seriesOf(task);
      series.outcomes[outcome].inc();
      if (traceId === undefined || spanId === undefined) {
        if (waitMs !== undefined) series.waitSeconds.observe(waitMs / 1000);
        if (runMs !== undefined) series.runSeconds.observe(runMs / 1000);
        return;
      }
      // A sampled task: its buckets link to its trace (exemplars, in OpenMetrics).
      if (waitMs !== undefined) series.waitSeconds.observeTraced(waitMs / 1000, traceId, spanId);
      if (runMs !== undefined) series.runSeconds.observeTraced(runMs / 1000, traceId, spanId);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private seriesOf(task: string): TaskSeries {
    let series = this.byTask.get(task);
    if (series === undefined) {
      const outcomes = Object.fromEntries(
        OUTCOMES.map((outcome) => [outcome, this.tasks.series({ task, outcome })]),
      ) as Record<TaskOutcome, CounterSeries>;
      series = {
        outcomes,
        waitSeconds: this.waitSeconds.series({ task }),
        runSeconds: this.runSeconds.series({ task }),
      };
      this.byTask.set(task, series);
    }
    return series;
  }
}
