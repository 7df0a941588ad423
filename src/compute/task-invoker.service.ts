import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientKeyOf } from '../auth/client-key';
import { Errors } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import { clientDeadlineMs } from '../http/request-deadline';
import { mediaType, TaskInputReader } from '../http/task-input-reader';
import type { TaskDefinition } from '@corepool/core';
import { TaskRegistry } from '@corepool/core';
import { WorkerPoolService, type TaskResult } from '@corepool/nestjs';
import { clientGone } from './client-abort';

export interface InvokedTask {
  readonly task: TaskDefinition;
  /** The validated input the task ran with. */
  readonly input: object;
  readonly result: TaskResult;
}

/**
 * The HTTP side of running a task: checks the content type against the task,
 * validates its input on the main thread, and runs it on the pool with the
 * request's deadline (the client's own, from its headers, capped by
 * `TASK_TIMEOUT_MS`), its fair-share key and the client's disconnect as
 * cancellation.
 */
@Injectable()
export class TaskInvokerService {
  constructor(
    private readonly registry: TaskRegistry,
    private readonly pool: WorkerPoolService,
    private readonly config: AppConfig,
  ) {}

  async invoke(name: string, request: FastifyRequest, reply: FastifyReply): Promise<InvokedTask> {
    const task = this.registry.get(name);
    if (task === undefined) throw Errors.taskNotFound(name);
    const deadlineMs = clientDeadlineMs(request.headers);
    const { input, body } = this.readInput(task, request);
    const result = await this.pool.run(name, input, {
      body,
      deadlineMs,
      client: clientKeyOf(request, this.config.scheduler.clientKeyHeader),
      signal: clientGone(reply),
      arrivedAt: request.arrivedAt,
      requestId: request.id,
      trace: request.traceSpan ?? undefined,
    });
    return { task, input, result };
  }

  /** Binary tasks: raw body plus options in the query. JSON tasks: the body is the input. */
  private readInput(
    task: TaskDefinition,
    request: FastifyRequest,
  ): { input: object; body?: Uint8Array } {
    if (task.binary !== undefined) {
      const input = TaskInputReader.options(task, request);
      return { input, body: TaskInputReader.binaryBody(task, request, input) };
    }
    const contentType = mediaType(request.headers['content-type']);
    // No body at all means "all defaults", as the tutorial's clients expect.
    if (contentType !== undefined && contentType !== 'application/json') {
      throw Errors.unsupportedMediaType(contentType, ['application/json']);
    }
    if (Object.keys(request.query as object).length > 0) {
      throw Errors.validationFailed(
        'This task takes its input from the JSON body, not the query string',
        [{ property: 'query', messages: ['query parameters are not accepted for this task'] }],
      );
    }
    return { input: TaskInputReader.json(task, request.body) };
  }
}
