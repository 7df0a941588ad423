import type { FastifyRequest } from 'fastify';
import type { TaskDefinition } from '@corepool/core';
import type { TaskRegistry } from '@corepool/core';
import { routeProfileOf } from './request-context';

/**
 * The binary task a request sends raw bytes to, if any: its route declares
 * which task its body is for (`@HttpBehaviour({ taskBody })`). Such a body
 * stays a Buffer (parsing it is the task's job, on a thread) and may be as
 * large as BINARY_BODY_LIMIT_BYTES; every other body is parsed as JSON on the
 * event loop and held to BODY_LIMIT_BYTES.
 */
export function rawBodyTask(
  request: FastifyRequest,
  registry: TaskRegistry,
): TaskDefinition | undefined {
  const name = routeProfileOf(request).taskName(request);
  const task = name === undefined ? undefined : registry.get(name);
  return task?.binary !== undefined ? task : undefined;
}
