import { Body, Controller, Get, Module, Post, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { ComputeModule, PoolHealthIndicator, WorkerPoolService } from '@corepool/nestjs';
import { join } from 'node:path';
import { Registry } from 'prom-client';

jest.setTimeout(60_000);

const TASKS = join(__dirname, '..', 'packages', 'core', 'test', 'fixtures', 'tasks-array.cjs');

/** A Nest app as a user writes one: a route runs a task, a health check reads the pool. */
@Controller()
class FibController {
  constructor(
    private readonly pool: WorkerPoolService,
    private readonly health: HealthCheckService,
    private readonly poolHealth: PoolHealthIndicator,
  ) {}

  @Post('fib')
  async fib(@Body() body: { n: number }, @Req() request: { headers: Record<string, string> }) {
    const deadline = request.headers['x-deadline-ms'];
    const { value } = await this.pool.run('fib', body, {
      deadlineMs: deadline === undefined ? undefined : Number(deadline),
      client: request.headers['x-client'],
    });
    return { value };
  }

  @Get('health')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.poolHealth.isHealthy('pool')]);
  }
}

async function start(imports: unknown[]): Promise<NestFastifyApplication> {
  @Module({ imports: [...(imports as never[]), TerminusModule], controllers: [FibController] })
  class AppModule {}
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

const post = (app: NestFastifyApplication, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/fib', payload, headers });

describe('@corepool/nestjs in a Nest app (real threads)', () => {
  const registry = new Registry();
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await start([
      ComputeModule.forRoot({ tasks: [TASKS], threads: 1, metrics: { registry } }),
    ]);
  });
  afterAll(async () => {
    await app.close();
  });

  it('runs a task through the injected WorkerPoolService', async () => {
    const response = await post(app, { n: 20 });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ value: 6765 });
  });

  it('answers bad input 400 and a refusal before running 503 with Retry-After, as problems', async () => {
    const invalid = await post(app, { n: -1 });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(invalid.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    // fib 32 runs for a good part of a second: learnt, it cannot fit in 20 ms.
    for (let run = 0; run < 3; run++) {
      expect((await post(app, { n: 32 }, { 'x-client': 'a' })).statusCode).toBe(201);
    }
    const refused = await post(app, { n: 32 }, { 'x-client': 'a', 'x-deadline-ms': '20' });
    expect(refused.statusCode).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json()).toMatchObject({ code: 'POOL_SATURATED', reason: 'too-long' });
  });

  it('answers a deadline passed while running 504, and keeps the thread', async () => {
    // A size never measured is not refused: it runs, and its deadline stops it.
    const late = await post(app, { n: 38 }, { 'x-deadline-ms': '300' });
    expect(late.statusCode).toBe(504);
    expect(late.json()).toMatchObject({ code: 'TASK_TIMEOUT' });
    const pool = app.get(WorkerPoolService);
    expect(pool.stats()).toMatchObject({ threads: 1, threadRestarts: 0 });
  });

  it('reports health up with the saturation in its data', async () => {
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'ok',
      info: { pool: { status: 'up', queueSize: 0, saturated: false } },
    });
  });

  it("puts the pool's metrics in the app's registry", async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/^compute_pool_threads 1$/m);
    expect(text).toMatch(/^compute_tasks_total\{task="fib",outcome="success"\} [1-9]/m);
    expect(text).toMatch(/^compute_scheduler_refusals_total\{reason="too-long"\} 1$/m);
    expect(text).toMatch(/^compute_task_run_seconds_count\{task="fib"\} [1-9]/m);
  });
});

describe('ComputeModule.forRootAsync and its extras', () => {
  it('takes its options from a factory, and leaves errors to the app with httpErrors: false', async () => {
    const app = await start([
      ComputeModule.forRootAsync({
        useFactory: () => ({ tasks: [TASKS], threads: 1, metrics: false as const }),
        httpErrors: false,
      }),
    ]);
    try {
      expect((await post(app, { n: 10 })).json()).toEqual({ value: 55 });
      // Nest's own filter: an error it does not know is a 500.
      expect((await post(app, { n: -1 })).statusCode).toBe(500);
    } finally {
      await app.close();
    }
    // Closed with the app: the pool drained and refuses.
    await expect(app.get(WorkerPoolService).run('fib', { n: 1 })).rejects.toMatchObject({
      code: 'SHUTTING_DOWN',
    });
  });

  it("overrides a code's status with errorStatus", async () => {
    const app = await start([
      ComputeModule.forRoot({
        tasks: [TASKS],
        threads: 1,
        metrics: false,
        errorStatus: { VALIDATION_FAILED: 422 },
      }),
    ]);
    try {
      const invalid = await post(app, { n: 'ten' });
      expect(invalid.statusCode).toBe(422);
      expect(invalid.json()).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' });
    } finally {
      await app.close();
    }
  });
});
