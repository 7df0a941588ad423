import cluster, { type Worker } from 'node:cluster';
import { Counter, Registry } from 'prom-client';
import {
  COLLECT_TIMEOUT_MS,
  isCollectResult,
  isScrapeRequest,
  type CollectRequest,
  type MetricsSnapshot,
  type ScrapeResult,
} from './cluster-metrics.protocol';
import { aggregateSnapshots, lastingPart } from './cluster-snapshots';
import type { ExpositionFormat } from './exposition';
import { sharedCollection } from '../common/shared-collection';

const ignore = () => undefined;

/** Retired snapshots are merged into one once there are more than this. */
const RETIRED_COMPACT_AT = 16;

interface Collection {
  /** The processes asked and not yet answered, by cluster id. */
  readonly waiting: Set<number>;
  /** What each process that answered in time sent. */
  readonly answers: Map<number, MetricsSnapshot>;
  readonly finish: () => void;
}

export interface ClusterMetrics {
  /** Every process's metrics, aggregated, as text of the format. Never waits past the timeout. */
  collect(format?: ExpositionFormat): Promise<string>;
  /** Removes the cluster listeners. */
  stop(): void;
}

/**
 * The primary's side of "one scrape, whole cluster". A process that receives
 * `GET /metrics` asks the primary; the primary asks every process for its
 * registry, merges them with prom-client's aggregation and sends the text back,
 * in the format the scraper asked for (with exemplars in OpenMetrics).
 *
 * - A process that does not answer within `timeoutMs` is left out of that
 *   scrape and counted in `compute_metrics_collection_failures_total`; its
 *   counters and histograms from its last answer are used instead, so totals
 *   never go backwards.
 * - When a process exits, its last counters and histograms are kept (retired),
 *   for the same reason: a crash must not look like a counter reset.
 *
 * Imports no Nest: the primary stays small and starts fast.
 */
export function startClusterMetrics({
  timeoutMs = COLLECT_TIMEOUT_MS,
  cacheMs = 0,
} = {}): ClusterMetrics {
  const registry = new Registry();
  const failures = new Counter({
    name: 'compute_metrics_collection_failures_total',
    help: 'Times a cluster process did not hand over its metrics for a scrape in time (dead, stopped or too busy)',
    registers: [registry],
  });
  const collectionCount = new Counter({
    name: 'compute_metrics_collections_total',
    help: 'Times the registries were collected for a scrape; concurrent scrapes share one, and answer from it for METRICS_CACHE_MS',
    registers: [registry],
  });
  const latest = new Map<number, MetricsSnapshot>();
  let retired: MetricsSnapshot[] = [];
  const collections = new Map<number, Collection>();
  let nextId = 0;

  const answered = (collectionId: number, processId: number, metrics?: MetricsSnapshot) => {
    const collection = collections.get(collectionId);
    if (collection === undefined || !collection.waiting.delete(processId)) return;
    if (metrics === undefined) {
      failures.inc();
    } else {
      collection.answers.set(processId, metrics);
      latest.set(processId, metrics);
    }
    if (collection.waiting.size === 0) collection.finish();
  };

  const collectOnce = (format: ExpositionFormat) =>
    new Promise<string>((resolve, reject) => {
      collectionCount.inc();
      const id = nextId++;
      const handles = Object.values(cluster.workers ?? {}).filter(
        (handle): handle is Worker => handle?.isConnected() === true,
      );
      const waiting = new Set(handles.map((handle) => handle.id));
      const answers = new Map<number, MetricsSnapshot>();
      const finish = () => {
        clearTimeout(timer);
        collections.delete(id);
        failures.inc(waiting.size);
        // Processes that did not answer contribute what they had counted when
        // they last did. The inputs are fixed now, before any process exits
        // and moves its counts to `retired`, so nothing is counted twice.
        const silent = handles
          .filter((handle) => !answers.has(handle.id))
          .map((handle) => lastingPart(latest.get(handle.id) ?? []));
        const inputs = [...answers.values(), ...silent, ...retired];
        registry
          .getMetricsAsJSON()
          .then((own) => aggregateSnapshots([...inputs, own], format).metrics())
          .then(resolve, reject);
      };
      const timer = setTimeout(finish, timeoutMs);
      collections.set(id, { waiting, answers, finish });
      const request: CollectRequest = { type: 'corepool:metrics:collect', id };
      for (const handle of handles) {
        handle.send(request, (error: Error | null) => {
          if (error !== null) answered(id, handle.id);
        });
      }
      if (waiting.size === 0) finish();
    });

  // Scrapes that reach several processes at once share one round of every process (per format).
  const byFormat = {
    prometheus: sharedCollection(() => collectOnce('prometheus'), cacheMs),
    openmetrics: sharedCollection(() => collectOnce('openmetrics'), cacheMs),
  };
  const collect = (format: ExpositionFormat = 'prometheus') => byFormat[format]();
  const onMessage = (handle: Worker, message: unknown) => {
    if (isCollectResult(message)) {
      answered(message.id, handle.id, message.error === undefined ? message.metrics : undefined);
      return;
    }
    if (!isScrapeRequest(message)) return;
    const reply = (result: Omit<ScrapeResult, 'type' | 'id'>) => {
      if (!handle.isConnected()) return;
      // A process that went away meanwhile needs no answer; without a callback
      // the failed send would be an 'error' event that ends the primary.
      handle.send({ type: 'corepool:metrics:scrape-result', id: message.id, ...result }, ignore);
    };
    collect(message.format).then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: String(error) }),
    );
  };

  const onExit = (handle: Worker) => {
    const last = latest.get(handle.id);
    latest.delete(handle.id);
    if (last !== undefined) retired.push(lastingPart(last));
    for (const [id, collection] of collections) {
      // Its counts are in `retired` now; an answer it gave would count them twice.
      collection.answers.delete(handle.id);
      // Whatever it was asked and has not answered, it will not answer now.
      answered(id, handle.id);
    }
    if (retired.length > RETIRED_COMPACT_AT && !compacting) void compactRetired();
  };

  let compacting = false;
  const compactRetired = async () => {
    compacting = true;
    const batch = retired.length;
    try {
      const merged = await aggregateSnapshots(retired.slice(0, batch)).getMetricsAsJSON();
      // Processes that exited meanwhile were appended; keep them.
      retired = [merged, ...retired.slice(batch)];
    } finally {
      compacting = false;
    }
  };

  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  return {
    collect,
    stop: () => {
      cluster.off('message', onMessage);
      cluster.off('exit', onExit);
    },
  };
}
