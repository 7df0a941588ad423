import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Scope } from '../auth/scopes';
import { HttpBehaviour } from '../http/route-behaviour';
import { EventLoopHealthIndicator } from './event-loop.health';
import { JobStoreHealthIndicator } from './job-store.health';
import { MemoryHealthIndicator } from './memory.health';
import { PoolHealthIndicator } from './pool.health';
import { ShutdownHealthIndicator } from './shutdown.health';

/**
 * Probes come every few seconds, from machines: an access-log line each would say the same thing.
 * Kubernetes probes carry no credentials, so liveness and readiness are open; the
 * detailed health tells memory, threads and queue, so it is for admins.
 */
const PROBE = { accessLog: false, access: 'public' } as const;
const DETAILED = { accessLog: false, access: Scope.ADMIN } as const;

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly pool: PoolHealthIndicator,
    private readonly eventLoop: EventLoopHealthIndicator,
    private readonly shutdown: ShutdownHealthIndicator,
    private readonly memory: MemoryHealthIndicator,
    private readonly jobStore: JobStoreHealthIndicator,
  ) {}

  /**
   * Liveness: answering at all proves the event loop turns; the pool's load
   * never matters here. It checks nothing, so it answers Terminus's "ok" body
   * itself: Terminus's executor would build the same body through half a
   * dozen promises on every probe, a large share of this route's cost
   * (docs/adr/0005-light-probes-and-synchronous-hooks.md).
   */
  @Get('live')
  @HttpBehaviour(PROBE)
  @HealthCheck()
  live(): HealthCheckResult {
    return { status: 'ok', info: {}, error: {}, details: {} };
  }

  /** Readiness: 503 while starting, saturated, slow on the event loop, shutting down, or without its job store. */
  @Get('ready')
  @HttpBehaviour(PROBE)
  @HealthCheck()
  ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    return this.answer(reply, [
      () => this.shutdown.isReady('lifecycle'),
      () => this.pool.isReady('pool'),
      () => this.eventLoop.isReady('eventLoop'),
      () => this.jobStore.isReady('jobStore'),
    ]);
  }

  /** Readiness with details: pool, event loop, job store and memory; on ADMIN_PORT when one is set. */
  @Get()
  @HttpBehaviour({ ...DETAILED, admin: true })
  @HealthCheck()
  details(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    return this.answer(reply, [
      () => this.shutdown.isReady('lifecycle'),
      () => this.pool.isReady('pool', true),
      () => this.eventLoop.isReady('eventLoop'),
      () => this.jobStore.isReady('jobStore'),
      () => this.memory.report('memory'),
    ]);
  }

  /**
   * Terminus reports "down" by throwing a 503 whose response is the health
   * body; probes expect that body (Terminus's shape), not a problem document.
   */
  private async answer(
    reply: FastifyReply,
    checks: Parameters<HealthCheckService['check']>[0],
  ): Promise<HealthCheckResult> {
    try {
      return await this.health.check(checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      void reply.status(error.getStatus());
      return error.getResponse() as HealthCheckResult;
    }
  }
}
