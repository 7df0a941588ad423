// The IPC messages between a cluster process that serves a scrape and the
// primary that collects every process's metrics. Shared by both sides; no Nest
// here, so the primary stays light.

import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { ExpositionFormat } from './exposition';

/** A process's registry, as `Registry.getMetricsAsJSON()` gives it. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Process → primary: "a scrape reached me; send me the whole cluster's metrics". */
export interface ScrapeRequest {
  readonly type: 'corepool:metrics:scrape';
  readonly id: number;
  /** The format the scraper asked for; Prometheus's text when absent. */
  readonly format?: ExpositionFormat;
}

/** Primary → process: the aggregated text, or why there is none. */
export interface ScrapeResult {
  readonly type: 'corepool:metrics:scrape-result';
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** Primary → every process: "send me your registry". */
export interface CollectRequest {
  readonly type: 'corepool:metrics:collect';
  readonly id: number;
}

/** Process → primary: its registry. */
export interface CollectResult {
  readonly type: 'corepool:metrics:snapshot';
  readonly id: number;
  readonly metrics?: MetricsSnapshot;
  readonly error?: string;
}

/**
 * How long the primary waits for one process's registry. A process that has
 * not answered by then (stopped, busy, dying) is left out of that scrape, so a
 * scrape never waits longer than this, well inside Prometheus's default 10 s
 * scrape timeout.
 */
export const COLLECT_TIMEOUT_MS = 3000;

/** The label that tells processes apart in per-process metrics (heap, RSS, event loop). */
export const PROCESS_LABEL = 'pid';

const hasType = (message: unknown, type: string): boolean =>
  typeof message === 'object' &&
  message !== null &&
  (message as { type?: unknown }).type === type &&
  typeof (message as { id?: unknown }).id === 'number';

// Other modules use the same IPC channel; these guards let each side ignore
// every message that is not its own.
export const isScrapeRequest = (message: unknown): message is ScrapeRequest =>
  hasType(message, 'corepool:metrics:scrape');
export const isScrapeResult = (message: unknown): message is ScrapeResult =>
  hasType(message, 'corepool:metrics:scrape-result');
export const isCollectRequest = (message: unknown): message is CollectRequest =>
  hasType(message, 'corepool:metrics:collect');
export const isCollectResult = (message: unknown): message is CollectResult =>
  hasType(message, 'corepool:metrics:snapshot');
