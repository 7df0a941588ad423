import type { INestApplicationContext } from '@nestjs/common';
import type { DirectRoutes } from '../http/direct-routes';
import { HealthController } from './health.controller';

/**
 * The liveness probe, called by Fastify directly (`http/direct-routes.ts`): it
 * checks nothing, so Nest's pipeline was most of its own cost.
 */
export function directHealthRoutes(app: INestApplicationContext): DirectRoutes {
  const health = app.get(HealthController);
  return new Map([
    [
      'GET /health/live',
      { controller: HealthController, method: 'live', handler: () => health.live() },
    ],
  ]);
}
