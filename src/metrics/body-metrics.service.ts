import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { BodyMemoryBudget } from '../http/body-memory-budget';
import { freshMetric } from './metric-registry';

/**
 * The memory budget of request bodies, read at scrape time: what the
 * processes hold and what they may hold (summed over the cluster).
 */
@Injectable()
export class BodyMetricsService {
  constructor(budget: BodyMemoryBudget) {
    freshMetric(
      'compute_body_bytes_held',
      () =>
        new Gauge({
          name: 'compute_body_bytes_held',
          help: 'Bytes of request bodies held now (being received, queued or on a thread)',
          aggregator: 'sum',
          collect() {
            this.set(budget.bytesHeld);
          },
        }),
    );
    freshMetric(
      'compute_body_budget_bytes',
      () =>
        new Gauge({
          name: 'compute_body_budget_bytes',
          help: 'Bytes of request bodies the processes may hold at once (BODY_MEMORY_BUDGET_BYTES)',
          aggregator: 'sum',
          collect() {
            this.set(budget.limitBytes);
          },
        }),
    );
  }
}
