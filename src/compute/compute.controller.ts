import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Scope } from '../auth/scopes';
import { HttpBehaviour } from '../http/route-behaviour';
import type { ComputeOutput } from '../tasks/compute.task';
import { TaskInvokerService } from './task-invoker.service';
import type { ComputeResponseDto } from './dto/compute-response.dto';

/**
 * `POST /api/compute`, wire-compatible with the widely copied worker-threads
 * tutorial, so load scripts written for it run against corepool unchanged.
 */
@ApiTags('compute')
@Controller('api/compute')
export class ComputeController {
  constructor(private readonly invoker: TaskInvokerService) {}

  @Post()
  @HttpBehaviour({ access: Scope.TASKS_RUN, runsTask: true })
  @HttpCode(200)
  @ApiOperation({ summary: "The tutorial's heavy computation, run on the worker pool" })
  @ApiBody({ required: false, schema: { $ref: getSchemaPath('ComputeInput') } })
  @ApiOkResponse({
    description: "The tutorial's answer",
    schema: { $ref: getSchemaPath('ComputeResponse') },
  })
  async compute(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ComputeResponseDto> {
    const { result } = await this.invoker.invoke('compute', request, reply);
    const output = result.value as ComputeOutput;
    return {
      success: true,
      message: 'Heavy computation completed successfully',
      metrics: {
        status: 'success',
        executionTimeMs: Math.round(result.runMs * 100) / 100,
        data: {
          computedValue: output.computedValue,
          processedPayloadLength: output.processedPayloadLength,
          workerId: result.threadId,
        },
      },
    };
  }
}
