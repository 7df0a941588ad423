import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Counter } from 'prom-client';
import { Scope } from '../auth/scopes';
import { sharedCollection } from '../common/shared-collection';
import { AppConfig } from '../config/app-config';
import { HttpBehaviour } from '../http/route-behaviour';
import { freshMetric } from '../metrics/metric-registry';
import { EventLoopHealthIndicator } from './event-loop.health';
import { JobStoreHealthIndicator } from './job-store.health';
import { ProcessMemoryHealthIndicator } from './process-memory.health';
import { PoolHealthIndicator } from '@corepool/nestjs';
import { ShutdownHealthIndicator } from './shutdown.health';

/**
 * Probes come every few seconds, from machines: an access-log line each would say the same thing.
 * Kubernetes probes carry no credentials, so liveness and readiness are open; the
 * detailed health tells memory, threads and queue, so it is for admins.
 */
const PROBE = { accessLog: false, access: 'public' } as const;
const DETAILED = { accessLog: false, access: Scope.ADMIN } as const;

/** A health body and the status it is answered with (503 when a check is down). */
interface HealthAnswer {
  readonly status: number;
  readonly body: HealthCheckResult;
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  private readonly gatherings = freshMetric(
    'compute_health_gatherings_total',
    () =>
      new Counter({
        name: 'compute_health_gatherings_total',
        help: 'Times the detailed health was gathered; concurrent requests share one, and answer from it for HEALTH_CACHE_MS',
        aggregator: 'sum',
      }),
  );
  /** Concurrent requests share one gathering, and its answer for HEALTH_CACHE_MS. */
  private readonly gatherDetails: () => Promise<HealthAnswer>;

  constructor(
    private readonly health: HealthCheckService,
    private readonly pool: PoolHealthIndicator,
    private readonly eventLoop: EventLoopHealthIndicator,
    private readonly shutdown: ShutdownHealthIndicator,
    private readonly memory: ProcessMemoryHealthIndicator,
    private readonly jobStore: JobStoreHealthIndicator,
    config: AppConfig,
  ) {
    this.gatherDetails = sharedCollection(() => {
      this.gatherings.inc();
      return this.check([
        () => this.shutdown.isReady('lifecycle'),
        () => this.pool.isHealthy('pool', true),
        () => this.eventLoop.isReady('eventLoop'),
        () => this.jobStore.isReady('jobStore'),
        () => this.memory.report('memory'),
      ]);
    }, config.operator.healthCacheMs);
  }

  /**
   * Liveness: answering at all proves the event loop turns; the pool's load
   * never matters here. It checks nothing, so it answers Terminus's "ok" body
   * itself: Terminus's executor would build the same body through half a
   * dozen promises on every probe, a large share of this route's cost
   * (docs/adr/0005-light-probes-and-synchronous-hooks.md).
   */
  @Get('live')
  @HttpBehaviour(PROBE)
  @ApiOperation({ summary: 'Liveness: the process and its event loop answer' })
  @HealthCheck()
  live(): HealthCheckResult {
    return { status: 'ok', info: {}, error: {}, details: {} };
  }

  /**
   * Readiness, "can serve": 503 while starting, draining, with a wedged pool,
   * a blocked event loop or a lost job store; a busy pool is reported, not
   * failed (docs/adr/0043-readiness-means-can-serve.md).
   */
  @Get('ready')
  @HttpBehaviour(PROBE)
  @ApiOperation({
    summary: 'Readiness, "can serve": 503 while starting, draining, wedged or blocked',
  })
  @HealthCheck()
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    return this.answer(
      reply,
      await this.check([
        () => this.shutdown.isReady('lifecycle'),
        () => this.pool.isHealthy('pool'),
        () => this.eventLoop.isReady('eventLoop'),
        () => this.jobStore.isReady('jobStore'),
      ]),
    );
  }

  /** Readiness with details: pool, event loop, job store and memory; on ADMIN_PORT when one is set. */
  @Get()
  @HttpBehaviour({ ...DETAILED, admin: true })
  @ApiOperation({
    summary: 'Readiness with details: threads, queue, scheduler, event loop, job store, memory',
  })
  @HealthCheck()
  async details(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    return this.answer(reply, await this.gatherDetails());
  }

  private answer(reply: FastifyReply, { status, body }: HealthAnswer): HealthCheckResult {
    void reply.status(status);
    return body;
  }

  /**
   * Terminus reports "down" by throwing a 503 whose response is the health
   * body; probes expect that body (Terminus's shape), not a problem document.
   */
  private async check(checks: Parameters<HealthCheckService['check']>[0]): Promise<HealthAnswer> {
    try {
      return { status: 200, body: await this.health.check(checks) };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      return { status: error.getStatus(), body: error.getResponse() as HealthCheckResult };
    }
  }
}
