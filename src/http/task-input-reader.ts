import type { FastifyRequest } from 'fastify';
import { Errors } from '../common/app-error';
import { validateInput } from '@corepool/core/host';
import type { TaskDefinition } from '@corepool/core';
import { rawBodyLimit } from './body-limit';
import { routeProfileOf } from './request-context';

/**
 * The one reader of task input from a request, shared by `POST /api/tasks/:name`,
 * `POST /api/compute` and `POST /api/jobs`, so a job is checked exactly as a
 * synchronous call is, before it is queued.
 */
export const TaskInputReader = {
  /**
   * A binary task's raw body: its content type must be one the task accepts,
   * and it must fit the limit of its options (the task's own, or the cap its
   * options set) and `maxBodyBytes` when the route has a tighter bound.
   */
  binaryBody(
    task: TaskDefinition,
    request: FastifyRequest,
    options: object,
    maxBodyBytes = Infinity,
  ): Buffer {
    const accepted = task.binary?.contentTypes ?? [];
    const contentType = mediaType(request.headers['content-type']);
    if (contentType === undefined || !accepted.includes(contentType)) {
      throw Errors.unsupportedMediaType(contentType, accepted);
    }
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const limit = rawBodyLimit(task, options, maxBodyBytes);
    if (body.length > limit.bytes) throw limit.refusal(body.length);
    return body;
  },

  /**
   * A binary task's options, from the query string (minus the route's own
   * parameters). The hooks check them before the body is read too, since the
   * body's limit may depend on them.
   */
  options(task: TaskDefinition, request: FastifyRequest): object {
    return validateInput(task.input, routeProfileOf(request).taskOptions(request), 'query');
  },

  /** A JSON task's input: the body, or a job's `input`, validated against the task's input. */
  json(task: TaskDefinition, value: unknown): object {
    return validateInput(task.input, value);
  },
};

/** `application/json; charset=utf-8` → `application/json`. */
export function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}
