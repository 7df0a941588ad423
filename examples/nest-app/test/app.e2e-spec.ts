// End to end: the whole app on a real port, the pool's real threads.
import { createHash } from 'node:crypto';
import { Test, TestingModule } from '@nestjs/testing';
import { INestApplication } from '@nestjs/common';
import { WorkerPoolService } from '@corepool/nestjs';
import request from 'supertest';
import { AppModule } from './../src/app.module';

/** Thousands of seconds of work: only a deadline or a cancellation ends it. */
const ENDLESS = { rounds: 50_000_000 };

async function until(condition: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 20_000;) {
    if (condition()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('AppController (e2e)', () => {
  let app: INestApplication;
  let url: string;
  let pool: WorkerPoolService;

  // One app for the file: its metrics live in prom-client's one default registry.
  beforeAll(async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();
    app = moduleFixture.createNestApplication();
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    pool = app.get(WorkerPoolService);
  });

  afterAll(async () => {
    await app.close();
  });

  it('POST /hash runs the task on a thread', async () => {
    let digest = Buffer.from('abc');
    for (let i = 0; i < 3; i++)
      digest = createHash('sha256').update(digest).digest();
    await request(url)
      .post('/hash')
      .send({ rounds: 3, seed: 'abc' })
      .expect(200)
      .expect({ digest: digest.toString('hex'), rounds: 3 });
  });

  it('answers 400 for an input the task refuses', async () => {
    const response = await request(url)
      .post('/hash')
      .send({ rounds: 0 })
      .expect(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
  });

  it('GET /health/ready reports the pool up', async () => {
    const response = await request(url).get('/health/ready').expect(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      info: { pool: { status: 'up', saturated: false } },
    });
  });

  it("GET /metrics serves the pool's metrics", async () => {
    const response = await request(url).get('/metrics').expect(200);
    expect(response.text).toMatch(/^compute_pool_threads 2$/m);
    expect(response.text).toMatch(/^compute_pool_utilization /m);
  });

  it('answers 504 at the deadline and keeps the thread', async () => {
    const response = await request(url)
      .post('/hash')
      .set('x-request-timeout-ms', '300')
      .send(ENDLESS)
      .expect(504);
    expect(response.body.code).toBe('TASK_TIMEOUT');
    // The task stopped at its next check: the same threads, none replaced.
    await until(() => pool.stats().running === 0, 'the task to stop');
    expect(pool.stats()).toMatchObject({
      threads: 2,
      threadRestarts: 0,
      tasksStopped: { cooperative: 1, terminated: 0 },
    });
    await request(url).post('/hash').send({ rounds: 1 }).expect(200);
  });

  it('cancels the task when its client goes away', async () => {
    const stoppedBefore = pool.stats().tasksStopped.cooperative;
    const client = new AbortController();
    const answer = fetch(`${url}/hash`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ENDLESS),
      signal: client.signal,
    });
    await until(() => pool.stats().running === 1, 'the task to start');
    client.abort();
    await expect(answer).rejects.toThrow();
    await until(
      () => pool.stats().tasksStopped.cooperative === stoppedBefore + 1,
      'the task to be cancelled',
    );
    expect(pool.stats()).toMatchObject({
      running: 0,
      threads: 2,
      threadRestarts: 0,
    });
    const metrics = await request(url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /^compute_tasks_total\{task="hash-chain",outcome="cancelled"\} 1$/m,
    );
  });

  // Last: the runs it measures would make the scheduler refuse a shorter deadline above.
  it('refuses with 503 and Retry-After, before running, a task its deadline cannot hold', async () => {
    // Measured runs of one size make its cost sure (two per thread)...
    const runs: number[] = [];
    for (let i = 0; i < 6; i++) {
      const started = performance.now();
      await request(url).post('/hash').send({ rounds: 60_000 }).expect(200);
      runs.push(performance.now() - started);
    }
    const completedBefore = pool.stats().completed;
    // ...so a deadline far below its fastest run is refused at once.
    const deadlineMs = Math.max(1, Math.floor(Math.min(...runs) / 4));
    const response = await request(url)
      .post('/hash')
      .set('x-request-timeout-ms', String(deadlineMs))
      .send({ rounds: 60_000 })
      .expect(503);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(response.body.code).toBe('POOL_SATURATED');
    expect(pool.stats().completed).toBe(completedBefore);
    const metrics = await request(url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /^compute_scheduler_refusals_total\{reason="too-long"\} 1$/m,
    );
  });
});
