import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { PoolHealthIndicator } from '@corepool/nestjs';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly pool: PoolHealthIndicator,
  ) {}

  /** Liveness: the event loop answers. It must not depend on the pool, which may be busy. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** Readiness: 503 while the pool cannot serve (threads starting, saturated, shutting down). */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.pool.isHealthy('pool')]);
  }
}
