import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Scope } from '../auth/scopes';
import { HttpBehaviour } from '../http/route-behaviour';
import { TaskCatalogService, type TaskCatalogEntry } from './task-catalog.service';
import { TaskInvokerService } from './task-invoker.service';

@ApiTags('tasks')
@Controller('api/tasks')
export class TasksController {
  constructor(
    private readonly catalog: TaskCatalogService,
    private readonly invoker: TaskInvokerService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The task catalog: each task, its input and its limits' })
  @ApiOkResponse({
    description: 'Every task',
    schema: { type: 'array', items: { $ref: getSchemaPath('TaskCatalogEntry') } },
  })
  list(): readonly TaskCatalogEntry[] {
    return this.catalog.list();
  }

  @Post(':name')
  @HttpBehaviour({ taskBody: { param: 'name' }, access: Scope.TASKS_RUN, runsTask: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run one task on the worker pool',
    description:
      'JSON tasks take their input as the JSON body. Binary tasks take raw bytes as the body ' +
      'and their options in the query string; a task whose output is bytes answers with them. ' +
      'Each task also has an operation of its own, `POST /api/tasks/<name>`, typed by its input.',
  })
  @ApiParam({ name: 'name', description: 'A task name from GET /api/tasks' })
  async run(
    @Param('name') name: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const { task, input, result } = await this.invoker.invoke(name, request, reply);
    if (task.binary?.output === 'bytes' && result.value instanceof Uint8Array) {
      const bytes = result.value;
      void reply
        .header(
          'content-type',
          task.binary.responseContentType?.(input) ?? 'application/octet-stream',
        )
        .header('x-task-wait-ms', result.waitMs.toFixed(3))
        .header('x-task-run-ms', result.runMs.toFixed(3));
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    return {
      task: name,
      result: result.value,
      timing: { waitMs: result.waitMs, runMs: result.runMs },
    };
  }
}
