import { AggregatorRegistry, type Registry } from 'prom-client';
import { PROCESS_LABEL, type MetricsSnapshot } from './cluster-metrics.protocol';

type SnapshotMetric = MetricsSnapshot[number];

// prom-client types `type` as an enum, but the JSON carries its string name.
const kindOf = (metric: SnapshotMetric): string => String(metric.type);

const isPerProcess = (metric: SnapshotMetric): boolean =>
  metric.values.some((value) => Object.hasOwn(value.labels, PROCESS_LABEL));

/**
 * The part of a snapshot that stays true after the process is gone or silent:
 * its counters and histograms (they only grow), without per-process series.
 * Summed into the cluster's totals, it keeps them monotonic, so Prometheus
 * never mistakes a process that died or missed a scrape for a counter reset.
 */
export function lastingPart(snapshot: MetricsSnapshot): MetricsSnapshot {
  return snapshot.filter(
    (metric) =>
      (kindOf(metric) === 'counter' || kindOf(metric) === 'histogram') && !isPerProcess(metric),
  );
}

/**
 * Merges snapshots into one registry with prom-client's aggregation: each
 * metric by its own `aggregator` (counters and histograms summed per label
 * set). Per-process series carry their process's label, so they pass through
 * one per process, whatever their aggregator — even prom-client's `omit`
 * (`process_start_time_seconds`), which is right per process.
 */
export function aggregateSnapshots(snapshots: readonly MetricsSnapshot[]): Registry {
  const prepared = snapshots.map((snapshot) =>
    snapshot.map((metric) =>
      isPerProcess(metric) ? { ...metric, aggregator: 'first' as const } : metric,
    ),
  );
  return AggregatorRegistry.aggregate(prepared);
}
