import type { FastifyRequest } from 'fastify';
import type { TaskDefinition } from '../tasks/task-definition';
import type { TaskRegistry } from '../tasks/task-registry';
import { routeOf } from './request-context';

/**
 * The name of the binary task a request sends raw bytes to, if any. Such a
 * body stays a Buffer (parsing it is the task's job, on a thread) and may be
 * as large as BINARY_BODY_LIMIT_BYTES; every other body is parsed as JSON on
 * the event loop and held to BODY_LIMIT_BYTES.
 */
export function rawBodyTask(
  request: FastifyRequest,
  registry: TaskRegistry,
): TaskDefinition | undefined {
  const name = taskNameOf(request);
  const task = name === undefined ? undefined : registry.get(name);
  return task?.binary !== undefined ? task : undefined;
}

function taskNameOf(request: FastifyRequest): string | undefined {
  switch (routeOf(request)) {
    case '/api/tasks/:name':
      return (request.params as { name?: string }).name;
    case '/api/jobs':
      return request.method === 'POST' ? (request.query as { task?: string }).task : undefined;
    default:
      return undefined;
  }
}
