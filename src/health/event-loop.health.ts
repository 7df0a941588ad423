import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { AppConfig } from '../config/app-config';

/** Length of one measurement window; readiness reads the last complete one. */
const WINDOW_MS = 1_000;
/** Sampling resolution of the delay histogram. */
const RESOLUTION_MS = 10;

/**
 * Event-loop delay from `perf_hooks.monitorEventLoopDelay`: the p99 of the
 * last one-second window. Past `READY_MAX_EVENT_LOOP_DELAY_MS` every request
 * on this process waits that long before its first line of code runs, so it
 * should get no new traffic. Windows keep probes from resetting each other.
 */
@Injectable()
export class EventLoopHealthIndicator implements OnModuleInit, OnModuleDestroy {
  private readonly histogram: ELDHistogram = monitorEventLoopDelay({
    resolution: RESOLUTION_MS,
  });
  private timer: NodeJS.Timeout | undefined;
  private lastWindow = { p99Ms: 0, maxMs: 0 };

  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.histogram.enable();
    this.timer = setInterval(() => this.rollWindow(), WINDOW_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  isReady<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const limitMs = this.config.readiness.maxEventLoopDelayMs;
    const data = { delayP99Ms: this.lastWindow.p99Ms, delayMaxMs: this.lastWindow.maxMs, limitMs };
    if (this.lastWindow.p99Ms > limitMs) {
      return indicator.down({ ...data, message: 'event-loop delay is past its limit' });
    }
    return indicator.up(data);
  }

  private rollWindow(): void {
    const toMs = (ns: number) => Math.round(ns / 1e4) / 100;
    // An empty window (no samples yet) reads as NaN/huge; it says nothing about delay.
    this.lastWindow =
      this.histogram.count === 0
        ? { p99Ms: 0, maxMs: 0 }
        : {
            // The histogram includes the sampling interval itself.
            p99Ms: Math.max(0, toMs(this.histogram.percentile(99)) - RESOLUTION_MS),
            maxMs: Math.max(0, toMs(this.histogram.max) - RESOLUTION_MS),
          };
    this.histogram.reset();
  }
}
