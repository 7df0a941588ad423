import { collectDefaultMetrics, register, type Metric } from 'prom-client';
import { PROCESS_LABEL } from './cluster-metrics.protocol';

/**
 * Creates a metric in prom-client's default registry, first removing one of the
 * same name that an earlier application in this process left behind (the
 * end-to-end tests start several in one process). Metrics that read a service
 * in `collect()` must be bound to this application's service, not the last one's.
 */
export function freshMetric<M>(name: string, create: () => M): M {
  register.removeSingleMetric(name);
  return create();
}

/** A corepool `LabelledMetric`, registered in prom-client's default registry as `freshMetric` does. */
export function registered<M extends { readonly name: string; asMetric(): Metric }>(metric: M): M {
  return freshMetric(metric.name, () => {
    register.registerMetric(metric.asMetric());
    return metric;
  });
}

/**
 * prom-client's defaults whose names break Prometheus's naming rules
 * (`promtool check metrics` rejects them). The gauges with a `_total` suffix
 * are each the sum of their sibling without it (`nodejs_active_handles{type}`),
 * so nothing is lost. The event-loop utilization that the official client
 * (ADR 0046) adds twice, named after its types: a summary's quantiles cannot be
 * summed across the cluster, and `compute_pool_utilization` and the event-loop
 * lag already tell how busy a process is.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
  'nodejs_eventloop_utilization_histogram',
  'nodejs_eventloop_utilization_summary',
];

/**
 * prom-client's default process and event-loop metrics, once per process,
 * labelled with the process id: heap, RSS, CPU and event-loop delay are
 * properties of one process and stay one series per process after the
 * cluster-wide aggregation.
 */
export function collectProcessMetrics(): void {
  if (register.getSingleMetric('process_cpu_user_seconds_total') !== undefined) return;
  collectDefaultMetrics({ labels: { [PROCESS_LABEL]: String(process.pid) } });
  for (const name of MISNAMED_DEFAULTS) register.removeSingleMetric(name);
}
