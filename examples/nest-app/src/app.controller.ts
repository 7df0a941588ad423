import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { WorkerPoolService } from '@corepool/nestjs';
import { validateInput } from '@corepool/core/host';
import type { Response } from 'express';
import { hashChain } from './tasks/hash-chain.task';

@Controller()
export class AppController {
  constructor(private readonly pool: WorkerPoolService) {}

  /**
   * Runs the task on a pool thread. Its failures need no handling here: the
   * module's exception filter answers 400, 404, 503 with Retry-After, 504.
   */
  @Post('hash')
  @HttpCode(200)
  async hash(
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
    @Headers('x-request-timeout-ms') deadline?: string,
  ): Promise<unknown> {
    // Cancel the task when the client goes away before its answer: its
    // thread stops at its next throwIfCancelled() and serves someone else.
    const clientGone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) clientGone.abort();
    });
    // run() takes the input as given: the task's schema checks it here
    // (400 VALIDATION_FAILED) and fills in its defaults.
    const input = validateInput(hashChain.input, body);
    const { value } = await this.pool.run(hashChain.name, input, {
      deadlineMs: Number(deadline) || undefined,
      signal: clientGone.signal,
    });
    return value;
  }
}
