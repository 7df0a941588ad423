import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { AppConfig } from '../config/app-config';
import type { SchedulerState } from '../scheduler/task-scheduler';
import { WorkerPoolService } from '../workers/worker-pool.service';
import { QueueSaturation } from './queue-saturation';

/**
 * The pool is ready when its threads are warm and its queue is below the
 * high-water mark (`READY_QUEUE_HIGH_WATER`, with hysteresis). A saturated
 * process should get no new traffic: its callers would only wait or get 503.
 */
@Injectable()
export class PoolHealthIndicator {
  private readonly saturation: QueueSaturation;

  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly pool: WorkerPoolService,
    config: AppConfig,
  ) {
    this.saturation = new QueueSaturation(config.readiness.queueHighWater);
  }

  /** `detailed` adds threads, utilization, wait/run p95 and the scheduler's state (for `GET /health`). */
  isReady<const Key extends string>(key: Key, detailed = false): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const stats = this.pool.stats();
    const saturated = this.saturation.update(stats.queueSize, stats.maxQueue);
    const data = {
      queueSize: stats.queueSize,
      maxQueue: stats.maxQueue,
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
    if (saturated) {
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
