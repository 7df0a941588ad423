import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { SchedulerState } from '@corepool/core';
import type { ComputeModuleOptions } from './compute-module-options';
import { COMPUTE_MODULE_OPTIONS } from './compute.module-definition';
import { WorkerPoolService } from './worker-pool.service';
import { PoolProgress } from './pool-progress';
import { QueueSaturation } from './queue-saturation';

/** Margin of the default progress timeout over a task's deadline and grace. */
const PROGRESS_MARGIN_MS = 10_000;

/**
 * The pool's health for Terminus: up when it can serve — its threads are
 * warm, it is not draining, and it makes progress (tasks waiting and none
 * finished for `health.progressTimeoutMs` is a wedged pool). Busy is not
 * unready: every replica behind a load balancer saturates together, and
 * taking them all out turns a brownout into an outage; admission answers the
 * excess with fast 503s (corepool's ADR 0043). Saturation is reported in the
 * data, and fails the check only when `health.queueHighWater` is set.
 *
 * ```ts
 * this.health.check([() => this.poolHealth.isHealthy('pool')])
 * ```
 */
@Injectable()
export class PoolHealthIndicator {
  private readonly highWater: QueueSaturation | undefined;
  private readonly progress = new PoolProgress();
  private readonly progressTimeoutMs: number;

  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly pool: WorkerPoolService,
    @Inject(COMPUTE_MODULE_OPTIONS) options: ComputeModuleOptions,
  ) {
    const { queueHighWater, progressTimeoutMs } = options.health ?? {};
    this.highWater = queueHighWater === undefined ? undefined : new QueueSaturation(queueHighWater);
    const { taskTimeoutMs, cancelGraceMs } = pool.settings.pool;
    this.progressTimeoutMs =
      progressTimeoutMs ?? taskTimeoutMs + cancelGraceMs + PROGRESS_MARGIN_MS;
  }

  /**
   * The check, under `key`: queue size and limit, `saturated`, `stalledMs`; `detailed` adds
   * threads, utilization, wait/run p95 and the scheduler's state.
   */
  isHealthy<const Key extends string>(key: Key, detailed = false): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const stats = this.pool.stats();
    const pastHighWater = this.highWater?.update(stats.queueSize, stats.maxQueue) ?? false;
    const stalledMs = Math.round(this.progress.stalledMs(stats.queueSize, stats.completed));
    const data = {
      queueSize: stats.queueSize,
      maxQueue: stats.maxQueue,
      // Every thread busy and tasks waiting: reported, answered by admission and the autoscaler.
      saturated: stats.queueSize > 0,
      stalledMs,
      ...(detailed
        ? {
            mode: stats.mode,
            threads: stats.threads,
            targetThreads: stats.targetThreads,
            running: stats.running,
            utilization: stats.utilization,
            waitP95Ms: stats.waitMs.p95,
            runP95Ms: stats.runMs.p95,
            completed: stats.completed,
            threadRestarts: stats.threadRestarts,
            ...(stats.scheduler === undefined ? {} : { scheduler: schedulerView(stats.scheduler) }),
          }
        : {}),
    };
    if (!stats.accepting) return indicator.down({ ...data, message: 'the pool is draining' });
    // Not ready while accepting means the threads are not warm yet.
    if (!stats.ready) return indicator.down({ ...data, message: 'worker threads are starting' });
    if (this.progressTimeoutMs > 0 && stalledMs >= this.progressTimeoutMs) {
      return indicator.down({
        ...data,
        progressTimeoutMs: this.progressTimeoutMs,
        message: `the pool is wedged: tasks have waited ${stalledMs} ms and none finished`,
      });
    }
    if (pastHighWater) {
      return indicator.down({ ...data, message: 'the task queue is past its high-water mark' });
    }
    return indicator.up(data);
  }
}

/** Keys listed in `GET /health`: the deepest lines are the ones worth seeing. */
const HEALTH_KEYS = 5;

/** The overload controller as `GET /health` shows it. */
function schedulerView(state: SchedulerState) {
  return {
    mode: state.mode,
    queueDelayMs: Math.round(state.lastDelayMs),
    targetDelayMs: state.targetDelayMs,
    intervalMs: state.intervalMs,
    backlogMs: Math.round(state.backlogMs),
    refusals: state.refusals,
    keys: state.keys.slice(0, HEALTH_KEYS).map(({ key, waiting }) => ({ key, waiting })),
    jobs: state.jobs,
  };
}
