import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { ShutdownService } from '../lifecycle/shutdown.service';

/** Down from the moment a shutdown signal arrives, so load balancers stop sending traffic. */
@Injectable()
export class ShutdownHealthIndicator {
  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly lifecycle: ShutdownService,
  ) {}

  isReady<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const { phase } = this.lifecycle;
    return phase === 'serving'
      ? indicator.up({ phase })
      : indicator.down({ phase, message: 'the process is shutting down' });
  }
}
