/**
 * NestJS on Fastify with nothing of corepool's: the same two routes the lean
 * baseline has (`GET /health/live`, `POST /api/tasks/:name` on Piscina with
 * the built task code), as one plain controller — no validation, logging,
 * metrics, request ids, deadlines, cancellation or drain. Between the lean
 * baseline and corepool it tells what Nest itself costs per request and
 * what corepool's own features cost.
 *
 *   POOL_THREADS=2 WORKER_NICE_INCREMENT=19 PORT=3000 \
 *     node --require tsx/cjs bench/baselines/nest-minimal.ts
 */
import 'reflect-metadata';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Body, Controller, Get, HttpCode, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Piscina } from 'piscina';

interface TaskResponse {
  readonly ok: boolean;
  readonly value?: unknown;
  readonly runMs: number;
}

const threads = Number(process.env.POOL_THREADS ?? availableParallelism());
const pool = new Piscina<{ task: string; input: object }, TaskResponse>({
  filename: resolve(__dirname, '..', '..', 'dist', 'workers', 'thread-entry.js'),
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Infinity,
  // As in the service: each thread lowers its priority once its task code is loaded.
  workerData: { taskModules: [], niceIncrement: Number(process.env.WORKER_NICE_INCREMENT ?? 0) },
  // Plain JavaScript threads, even though this file runs through tsx.
  execArgv: [],
});

@Controller()
class MinimalController {
  // The same body as the service's liveness answer.
  @Get('health/live')
  live(): object {
    return { status: 'ok', info: {}, error: {}, details: {} };
  }

  @Post('api/tasks/:name')
  @HttpCode(200)
  async run(@Param('name') name: string, @Body() input: object): Promise<object> {
    const response = await pool.run({ task: name, input });
    return { task: name, result: response.value, timing: { runMs: response.runMs } };
  }
}

@Module({ controllers: [MinimalController] })
class MinimalModule {}

async function main(): Promise<void> {
  await Promise.all(Array.from({ length: threads }, () => pool.run({ task: '', input: {} })));
  const app = await NestFactory.create<NestFastifyApplication>(
    MinimalModule,
    new FastifyAdapter({ logger: false }),
    { logger: false },
  );
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
  process.stdout.write(`listening with ${threads} threads\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
