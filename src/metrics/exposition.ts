// The two text formats `/metrics` answers in, and the exemplars only one of them
// carries. No Nest here: the cluster's primary renders the scrape too.

import { Registry } from 'prom-client';

/** Prometheus's text format (0.0.4), or OpenMetrics 1.0, which carries exemplars. */
export type ExpositionFormat = 'prometheus' | 'openmetrics';

export const CONTENT_TYPES = {
  prometheus: Registry.PROMETHEUS_CONTENT_TYPE,
  openmetrics: Registry.OPENMETRICS_CONTENT_TYPE,
} as const satisfies Record<ExpositionFormat, string>;

/**
 * The format a scraper asked for: OpenMetrics when its `Accept` names it (Prometheus
 * does, first, unless its `scrape_protocols` say otherwise), else Prometheus's text.
 */
export function formatAccepted(accept: string | undefined): ExpositionFormat {
  if (accept === undefined) return 'prometheus';
  for (const range of accept.split(',')) {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'application/openmetrics-text') continue;
    const refused = parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter));
    if (!refused) return 'openmetrics';
  }
  return 'prometheus';
}

/**
 * A histogram bucket's exemplar: the trace of the last sampled request or task
 * that landed in it, as prom-client's registry writes it after the bucket's
 * line in OpenMetrics (`# {trace_id="…",span_id="…"} value timestamp`).
 */
export interface TraceExemplar {
  readonly labelSet: { readonly trace_id: string; readonly span_id: string };
  readonly value: number;
  /** Seconds since the epoch. */
  readonly timestamp: number;
}
