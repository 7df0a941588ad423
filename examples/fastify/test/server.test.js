'use strict';
// End to end: the real server on a real port, the pool's real threads.
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { join } = require('node:path');
const { buildServer } = require('../server');

/** Thousands of seconds of work: only a deadline or a cancellation ends it. */
const ENDLESS = { rounds: 50_000_000 };

async function start() {
  const { app, pool } = buildServer({ threads: 2, logger: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, pool, url };
}

const post = (url, task, body, headers = {}, signal) =>
  fetch(`${url}/tasks/${task}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });

async function until(condition, what) {
  for (const started = Date.now(); Date.now() - started < 20_000;) {
    if (await condition()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const readiness = async (url) => (await fetch(`${url}/ready`)).json();

describe('the Fastify example', () => {
  let server;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(() => server.app.close());

  it('runs a task on a thread and answers its result', async () => {
    const response = await post(server.url, 'hash-chain', { rounds: 3, seed: 'abc' });
    expect(response.status).toBe(200);
    let digest = Buffer.from('abc');
    for (let i = 0; i < 3; i++) digest = createHash('sha256').update(digest).digest();
    expect((await response.json()).value).toEqual({ digest: digest.toString('hex'), rounds: 3 });
  });

  it('answers 400 VALIDATION_FAILED and 404 TASK_NOT_FOUND', async () => {
    const invalid = await post(server.url, 'hash-chain', { rounds: 0 });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).code).toBe('VALIDATION_FAILED');
    const unknown = await post(server.url, 'no-such-task', {});
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe('TASK_NOT_FOUND');
  });

  it('refuses with 503 and Retry-After, before running, a task its deadline cannot hold', async () => {
    // Measured runs of one size make its cost sure (two per thread)...
    const runs = [];
    for (let i = 0; i < 6; i++) {
      const response = await post(server.url, 'hash-chain', { rounds: 60_000 });
      expect(response.status).toBe(200);
      runs.push((await response.json()).runMs);
    }
    const completedBefore = server.pool.stats().completed;
    // ...so a deadline far below its fastest run is refused at once.
    const deadlineMs = Math.max(1, Math.floor(Math.min(...runs) / 4));
    const refused = await post(
      server.url,
      'hash-chain',
      { rounds: 60_000 },
      { 'x-request-timeout-ms': String(deadlineMs) },
    );
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const problem = await refused.json();
    expect(problem.code).toBe('POOL_SATURATED');
    expect(problem.facts.reason).toBe('too-long');
    expect(server.pool.stats().completed).toBe(completedBefore);
  });

  it('answers 504 at the deadline and keeps the thread', async () => {
    const response = await post(server.url, 'hash-chain', ENDLESS, {
      'x-request-timeout-ms': '300',
    });
    expect(response.status).toBe(504);
    expect((await response.json()).code).toBe('TASK_TIMEOUT');
    // The task stopped at its next check: the same threads, none replaced.
    await until(async () => (await readiness(server.url)).running === 0, 'the task to stop');
    const stats = await readiness(server.url);
    expect(stats.threads).toBe(2);
    expect(stats.threadRestarts).toBe(0);
    expect(stats.tasksStopped).toMatchObject({ cooperative: 1, terminated: 0 });
    expect((await post(server.url, 'hash-chain', { rounds: 1 })).status).toBe(200);
  });

  it('cancels the task when its client goes away', async () => {
    const client = new AbortController();
    const answer = post(server.url, 'hash-chain', ENDLESS, {}, client.signal);
    await until(async () => (await readiness(server.url)).running === 1, 'the task to start');
    client.abort();
    await expect(answer).rejects.toThrow();
    await until(
      async () => (await readiness(server.url)).tasksStopped.cooperative === 1,
      'the task to be cancelled',
    );
    const stats = await readiness(server.url);
    expect(stats).toMatchObject({ running: 0, threads: 2, threadRestarts: 0 });
  });

  it('is ready once its threads are', async () => {
    const response = await fetch(`${server.url}/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ready: true, accepting: true, threads: 2 });
  });
});

describe('the Fastify example as a process', () => {
  it('finishes the task in flight on SIGTERM, then exits 0', async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'server.js')], {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((done) => child.once('exit', (code) => done(code)));
    try {
      // Fastify's logger prints the address it listens on.
      const url = await new Promise((done, fail) => {
        let output = '';
        child.stdout.on('data', (chunk) => {
          output += chunk;
          const match = /listening at (http:\/\/[^"\s]+)/i.exec(output);
          if (match) done(match[1]);
        });
        child.once('exit', () => fail(new Error(`exited before listening:\n${output}`)));
      });
      const inFlight = post(url, 'hash-chain', { rounds: 150_000 });
      await until(async () => (await readiness(url)).running === 1, 'the task to start');
      child.kill('SIGTERM');
      expect((await inFlight).status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
