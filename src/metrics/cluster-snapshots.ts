import { AggregatorRegistry, type Registry } from 'prom-client';
import { PROCESS_LABEL, type MetricsSnapshot } from './cluster-metrics.protocol';
import { CONTENT_TYPES, type ExpositionFormat, type TraceExemplar } from './exposition';

type SnapshotMetric = MetricsSnapshot[number];
type SnapshotValue = SnapshotMetric['values'][number] & {
  metricName?: string;
  exemplar?: TraceExemplar | null;
};

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
 * (`process_start_time_seconds`), which is right per process. A histogram
 * bucket keeps the newest exemplar any process had for it (prom-client's
 * aggregation drops them).
 */
export function aggregateSnapshots(
  snapshots: readonly MetricsSnapshot[],
  format: ExpositionFormat = 'prometheus',
): Registry {
  return aggregated(snapshots, format, isPerProcess);
}

/** One process's registry, as the scrape of a service of one process shows it. */
export function renderAlone(snapshot: MetricsSnapshot, format: ExpositionFormat): Promise<string> {
  return aggregated([snapshot], format, () => true).metrics();
}

function aggregated(
  snapshots: readonly MetricsSnapshot[],
  format: ExpositionFormat,
  passesThrough: (metric: SnapshotMetric) => boolean,
): Registry {
  const prepared = snapshots.map((snapshot) =>
    snapshot.map((metric) => {
      const kept = passesThrough(metric) ? { ...metric, aggregator: 'first' as const } : metric;
      // OpenMetrics names a counter's family without `_total` and adds it to the sample;
      // prom-client renames the registered copy only, not the name its values are read under.
      return format === 'openmetrics' && kindOf(metric) === 'counter'
        ? { ...kept, name: metric.name.replace(/_total$/, '') }
        : kept;
    }),
  );
  const registry = AggregatorRegistry.aggregate(prepared);
  registry.setContentType(CONTENT_TYPES[format]);
  keepExemplars(prepared, registry);
  return registry;
}

const sampleKey = (metric: { readonly name: string }, value: SnapshotValue): string =>
  `${metric.name}\u0000${value.metricName ?? ''}\u0000${Object.entries(value.labels)
    .map(([name, label]) => `${name}=${String(label)}`)
    .sort()
    .join('\u0000')}`;

/** Puts back, on each aggregated bucket, the newest exemplar of that bucket among the inputs. */
function keepExemplars(inputs: readonly MetricsSnapshot[], registry: Registry): void {
  const newest = new Map<string, TraceExemplar>();
  for (const snapshot of inputs) {
    for (const metric of snapshot) {
      if (kindOf(metric) !== 'histogram') continue;
      for (const value of metric.values as SnapshotValue[]) {
        const { exemplar } = value;
        if (exemplar === undefined || exemplar === null) continue;
        const key = sampleKey(metric, value);
        const known = newest.get(key);
        if (known === undefined || exemplar.timestamp > known.timestamp) newest.set(key, exemplar);
      }
    }
  }
  if (newest.size === 0) return;
  for (const metric of registry.getMetricsAsArray() as unknown as SnapshotMetric[]) {
    if (kindOf(metric) !== 'histogram') continue;
    for (const value of metric.values as SnapshotValue[]) {
      const exemplar = newest.get(sampleKey(metric, value));
      if (exemplar !== undefined) value.exemplar = exemplar;
    }
  }
}
