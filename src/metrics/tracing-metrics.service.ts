import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { activeTracing, SPAN_DROP_REASONS, type TracingStats } from '../tracing/tracing';
import { freshMetric } from './metric-registry';

/** With tracing off nothing is lost: every count reads 0, and the series still exist. */
const OFF: TracingStats = {
  exportFailures: 0,
  spansDropped: { export_failed: 0, queue_full: 0 },
  tracesCapped: 0,
};

/**
 * What tracing lost or refused (docs/observability.md, ADR 0055), read from
 * the process's tracing at scrape time; the cluster primary sums the processes.
 */
@Injectable()
export class TracingMetricsService {
  constructor() {
    const stats = () => activeTracing()?.stats() ?? OFF;
    freshMetric(
      'compute_tracing_export_failures_total',
      () =>
        new Counter({
          name: 'compute_tracing_export_failures_total',
          help: 'Span exports the OTLP collector did not take (refused, unreachable, timed out), after the exporter retried',
          aggregator: 'sum',
          collect() {
            this.reset();
            this.inc(stats().exportFailures);
          },
        }),
    );
    freshMetric(
      'compute_tracing_spans_dropped_total',
      () =>
        new Counter({
          name: 'compute_tracing_spans_dropped_total',
          help: 'Finished spans not exported, by reason: export_failed (their export failed), queue_full (OTEL_BSP_MAX_QUEUE_SIZE spans already held)',
          labelNames: ['reason'],
          aggregator: 'sum',
          collect() {
            this.reset();
            const { spansDropped } = stats();
            for (const reason of SPAN_DROP_REASONS) this.inc({ reason }, spansDropped[reason]);
          },
        }),
    );
    freshMetric(
      'compute_tracing_traces_capped_total',
      () =>
        new Counter({
          name: 'compute_tracing_traces_capped_total',
          help: 'Traces not recorded because TRACING_MAX_TRACES_PER_SECOND was reached, whatever the sampler or the caller asked',
          aggregator: 'sum',
          collect() {
            this.reset();
            this.inc(stats().tracesCapped);
          },
        }),
    );
  }
}
