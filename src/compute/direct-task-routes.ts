import type { INestApplicationContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { DirectRoutes } from '../http/direct-routes';
import { ComputeController } from './compute.controller';
import { TasksController } from './tasks.controller';

/**
 * The routes that run tasks, called by Fastify directly (`http/direct-routes.ts`):
 * the request's whole path is corepool's own hooks, the controller method and the pool.
 */
export function directTaskRoutes(app: INestApplicationContext): DirectRoutes {
  const tasks = app.get(TasksController);
  const compute = app.get(ComputeController);
  return new Map([
    [
      'POST /api/tasks/:name',
      {
        controller: TasksController,
        method: 'run',
        handler: (request: FastifyRequest, reply) =>
          tasks.run((request.params as { name: string }).name, request, reply),
      },
    ],
    [
      'POST /api/compute',
      {
        controller: ComputeController,
        method: 'compute',
        handler: (request, reply) => compute.compute(request, reply),
      },
    ],
  ]);
}
