import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '../config/app-config';
import { BodyMemoryBudget } from '../http/body-memory-budget';
import { REFUSAL_REASONS } from '@corepool/core';
import type { SchedulerState } from '@corepool/core';
import { WorkerPoolService } from '@corepool/nestjs';
import { LabelledHistogram } from './labelled-histogram';
import { freshMetric, registered } from './metric-registry';
import { taskBuckets } from './task-buckets';

/**
 * Keys with their own `key` label in the queue-depth gauge; the rest are
 * summed as `other`. Client keys come from a request header, so without a
 * bound one client could create a series per request.
 */
export const TOP_KEYS = 5;
export const OTHER_KEYS = 'other';

/**
 * The overload controller (`src/scheduler/`): refusals by reason, queue
 * delay, per-key queue depth (bounded) and the LIFO/FIFO mode. Counts and
 * depths are read from the pool's stats at scrape time; the queue delay is
 * observed as each task leaves the queue.
 */
@Injectable()
export class SchedulerMetricsService implements OnModuleInit, OnModuleDestroy {
  private readonly queueDelay = registered(
    new LabelledHistogram(
      'compute_scheduler_queue_delay_seconds',
      'Time a task waited in the scheduler before it reached a thread (CoDel sojourn)',
      [],
      taskBuckets(this.config.pool.taskTimeoutMs),
    ),
  ).series({});
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly pool: WorkerPoolService,
    budget: BodyMemoryBudget,
  ) {
    const state = () => this.pool.stats().scheduler;
    freshMetric(
      'compute_scheduler_refusals_total',
      () =>
        new Counter({
          name: 'compute_scheduler_refusals_total',
          help: 'Tasks refused at admission or shed while queued, by reason (deadline, too-long, queue-delay, backstop; memory: the body did not fit the memory budget)',
          labelNames: ['reason'],
          aggregator: 'sum',
          // The scheduler keeps the counts; the counter follows them, every reason from 0.
          collect() {
            const refusals = state()?.refusals;
            this.reset();
            for (const reason of REFUSAL_REASONS) this.inc({ reason }, refusals?.[reason] ?? 0);
            // Refused at the edge, before the body was read: the scheduler never saw it.
            this.inc({ reason: 'memory' }, budget.refusals);
          },
        }),
    );
    freshMetric(
      'compute_scheduler_queue_depth',
      () =>
        new Gauge({
          name: 'compute_scheduler_queue_depth',
          help: `Tasks waiting per fair-share key: the ${TOP_KEYS} deepest keys, the rest as "other"`,
          labelNames: ['key'],
          aggregator: 'sum',
          collect() {
            this.reset();
            for (const [key, waiting] of depthByKey(state())) this.set({ key }, waiting);
          },
        }),
    );
    freshMetric(
      'compute_scheduler_batches_total',
      () =>
        new Counter({
          name: 'compute_scheduler_batches_total',
          help: 'Messages that carried several small tasks to one thread at once (batches)',
          aggregator: 'sum',
          collect() {
            this.reset();
            this.inc(state()?.batches.sent ?? 0);
          },
        }),
    );
    freshMetric(
      'compute_scheduler_batched_tasks_total',
      () =>
        new Counter({
          name: 'compute_scheduler_batched_tasks_total',
          help: 'Tasks that reached their thread in a batch with others',
          aggregator: 'sum',
          collect() {
            this.reset();
            this.inc(state()?.batches.tasks ?? 0);
          },
        }),
    );
    freshMetric(
      'compute_scheduler_lifo',
      () =>
        new Gauge({
          name: 'compute_scheduler_lifo',
          help: '1 while the scheduler is overloaded and serves the newest task first (adaptive LIFO), 0 in FIFO',
          aggregator: 'sum',
          collect() {
            this.set(state()?.mode === 'lifo' ? 1 : 0);
          },
        }),
    );
  }

  onModuleInit(): void {
    this.unsubscribe = this.pool.onQueueDelay((delayMs) => this.queueDelay.observe(delayMs / 1000));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}

/** The deepest keys by name, the rest summed as `other` (always present, so the family has a series). */
export function depthByKey(state: SchedulerState | undefined): Map<string, number> {
  const depths = new Map<string, number>([[OTHER_KEYS, 0]]);
  state?.keys.forEach(({ key, waiting }, rank) => {
    const label = rank < TOP_KEYS && key !== OTHER_KEYS ? key : OTHER_KEYS;
    depths.set(label, (depths.get(label) ?? 0) + waiting);
  });
  return depths;
}
