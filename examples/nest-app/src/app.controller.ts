import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { WorkerPoolService } from '@corepool/nestjs';
import type { Response } from 'express';
import type { HashChainInput } from './tasks/hash-chain.task';

@Controller()
export class AppController {
  constructor(private readonly pool: WorkerPoolService) {}

  /**
   * Runs the task on a pool thread; `run()` checks the input against the
   * task's schema. Failures need no handling here: the module's exception
   * filter answers 400, 404, 503 with Retry-After, 504.
   */
  @Post('hash')
  @HttpCode(200)
  async hash(
    @Body() input: HashChainInput,
    @Res({ passthrough: true }) response: Response,
    @Headers('x-request-timeout-ms') deadline?: string,
  ): Promise<unknown> {
    // Cancel the task when the client goes away before its answer: its
    // thread stops at its next throwIfCancelled() and serves someone else.
    const clientGone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) clientGone.abort();
    });
    const { value } = await this.pool.run('hash-chain', input, {
      deadlineMs: Number(deadline) || undefined,
      signal: clientGone.signal,
    });
    return value;
  }
}
