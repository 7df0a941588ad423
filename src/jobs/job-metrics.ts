import { Counter, Gauge, Histogram, type Aggregator } from 'prom-client';
import { freshMetric } from '../metrics/metric-registry';
import type { JobStatus } from './job.types';

/** Final outcomes of a job: the `outcome` label of `compute_jobs_total`. */
export type JobOutcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * Job metrics on prom-client's default registry (served at /metrics). Counted
 * where a job ends: with BullMQ, in the process whose pool ran it, so the sum
 * over replicas counts each job once. Registered like every other metric
 * (`freshMetric`); this module is evaluated once per process.
 */
export const jobMetrics = {
  total: freshMetric(
    'compute_jobs_total',
    () =>
      new Counter({
        name: 'compute_jobs_total',
        help: 'Jobs finished, by task and outcome (succeeded, failed, cancelled)',
        labelNames: ['task', 'outcome'] as const,
      }),
  ),
  duration: freshMetric(
    'compute_job_duration_seconds',
    () =>
      new Histogram({
        name: 'compute_job_duration_seconds',
        help: 'Time from submission to the end of a job (queue, retries and run)',
        labelNames: ['task'] as const,
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
      }),
  ),
  queueDepth: freshMetric(
    'compute_jobs_queue_depth',
    () =>
      new Gauge({
        name: 'compute_jobs_queue_depth',
        help: 'Jobs by state (queued, running, succeeded, failed, cancelled) in the job store',
        labelNames: ['state'] as const,
      }),
  ),
};

/** Counts a finished job and observes its time from submission. */
export function recordJobEnd(
  task: string,
  outcome: JobOutcome,
  createdAtMs: number,
  now = Date.now(),
) {
  jobMetrics.total.inc({ task, outcome });
  jobMetrics.duration.observe({ task }, Math.max(0, now - createdAtMs) / 1000);
}

/**
 * The gauge reads the store at scrape time; `read` may fail (Redis down): the
 * last values stay. `aggregator` is how cluster processes combine: `max` for the
 * backends whose processes all read one shared store (the SQLite file, the
 * BullMQ queue), which would otherwise be counted once per process.
 */
export function trackQueueDepth(
  read: () => Promise<Partial<Record<JobStatus, number>>>,
  aggregator: Aggregator,
): () => void {
  let active = true;
  const gauge = jobMetrics.queueDepth as Gauge<'state'> & {
    collect?: () => Promise<void>;
    aggregator: Aggregator;
  };
  gauge.aggregator = aggregator;
  // prom-client calls `collect` before each scrape; the newest store wins (one per process).
  gauge.collect = async () => {
    if (!active) return;
    try {
      const counts = await read();
      for (const [state, value] of Object.entries(counts)) gauge.set({ state }, value);
    } catch {
      // Keep the previous values; QUEUE_UNAVAILABLE shows in the API and logs.
    }
  };
  return () => {
    active = false;
  };
}
