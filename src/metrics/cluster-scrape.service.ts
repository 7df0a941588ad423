import cluster from 'node:cluster';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Counter, register } from 'prom-client';
import { Errors } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import {
  COLLECT_TIMEOUT_MS,
  isCollectRequest,
  isScrapeResult,
  type CollectResult,
  type ScrapeRequest,
} from './cluster-metrics.protocol';
import { renderAlone } from './cluster-snapshots';
import type { ExpositionFormat } from './exposition';
import { freshMetric } from './metric-registry';
import { sharedCollection } from '../common/shared-collection';

const ignore = () => undefined;

/** The primary answers within its collection timeout; this is the margin for the IPC itself. */
const PRIMARY_MARGIN_MS = 2000;

interface PendingScrape {
  resolve(text: string): void;
  reject(error: Error): void;
}

/**
 * A cluster process's side of "one scrape, whole cluster". Serving a scrape, it asks
 * the primary for every process's metrics, aggregated; asked by the primary,
 * it hands over its own registry. Without a primary (`CLUSTER_PROCESSES=1`) a
 * scrape is this process's registry, which is then the whole service.
 */
@Injectable()
export class ClusterScrapeService implements OnModuleInit, OnModuleDestroy {
  private readonly pending = new Map<number, PendingScrape>();
  private nextId = 0;
  /** Collections this process ran itself (one process, no primary); the primary counts its own. */
  private readonly collections = freshMetric(
    'compute_metrics_collections_total',
    () =>
      new Counter({
        name: 'compute_metrics_collections_total',
        help: 'Times the registries were collected for a scrape; concurrent scrapes share one, and answer from it for METRICS_CACHE_MS',
        aggregator: 'sum',
      }),
  );
  /** Concurrent scrapes of a format share one collection, and its answer for METRICS_CACHE_MS (shared-collection.ts). */
  private readonly byFormat: Readonly<Record<ExpositionFormat, () => Promise<string>>>;

  constructor(config: AppConfig) {
    this.byFormat = {
      prometheus: sharedCollection(() => this.collect('prometheus'), config.metrics.cacheMs),
      openmetrics: sharedCollection(() => this.collect('openmetrics'), config.metrics.cacheMs),
    };
  }

  /** The whole service's metrics as text of the format (exemplars only in OpenMetrics). */
  scrape(format: ExpositionFormat = 'prometheus'): Promise<string> {
    return this.byFormat[format]();
  }
  private readonly onMessage = (message: unknown) => {
    if (isCollectRequest(message)) this.handOver(message.id);
    else if (isScrapeResult(message)) {
      const pending = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.text !== undefined) pending?.resolve(message.text);
      else pending?.reject(Errors.metricsUnavailable(message.error ?? 'no metrics'));
    }
  };

  onModuleInit(): void {
    if (cluster.isWorker) process.on('message', this.onMessage);
  }

  onModuleDestroy(): void {
    process.off('message', this.onMessage);
    for (const pending of this.pending.values()) {
      pending.reject(Errors.metricsUnavailable('this process is shutting down'));
    }
    this.pending.clear();
  }

  /** The text for the whole service: every cluster process, or this one alone. */
  private async collect(format: ExpositionFormat): Promise<string> {
    if (!cluster.isWorker) {
      this.collections.inc();
      // prom-client's registry renames its counters to render OpenMetrics: the default
      // registry is rendered from a copy in that format.
      return format === 'prometheus'
        ? register.metrics()
        : renderAlone(await register.getMetricsAsJSON(), format);
    }
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(Errors.metricsUnavailable('the cluster primary did not answer in time'));
      }, COLLECT_TIMEOUT_MS + PRIMARY_MARGIN_MS);
      this.pending.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      const request: ScrapeRequest = { type: 'corepool:metrics:scrape', id, format };
      // A failed send shows as the timeout above.
      process.send?.(request, undefined, undefined, ignore);
    });
  }

  private handOver(id: number): void {
    const send = (result: Omit<CollectResult, 'type' | 'id'>) =>
      // If the primary is gone, this process is about to end anyway; the
      // callback keeps the failed send from becoming an uncaught 'error'.
      process.send?.(
        { type: 'corepool:metrics:snapshot', id, ...result },
        undefined,
        undefined,
        ignore,
      );
    register.getMetricsAsJSON().then(
      (metrics) => send({ metrics }),
      (error: unknown) => send({ error: String(error) }),
    );
  }
}
