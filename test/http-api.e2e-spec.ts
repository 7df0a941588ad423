import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { WorkerPoolService, type TaskSettled } from '@corepool/nestjs';
import { postJson, startApp, type RunningApp } from './support/http-app';
import { waitUntil } from './support/poll';

jest.setTimeout(60_000);

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await response.json()) as Record<string, unknown>;
  expect({ status: response.status, code: problem.code }).toEqual({ status, code });
  expect(problem).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return problem;
}

describe('HTTP API (real server, real threads)', () => {
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp({ BODY_LIMIT_BYTES: '4096', BINARY_BODY_LIMIT_BYTES: '262144' });
  });
  afterAll(() => service.close());

  describe('GET /api/tasks', () => {
    it('lists every task with its input schema, content types and limits', async () => {
      const response = await fetch(`${service.url}/api/tasks`);
      expect(response.status).toBe(200);
      const tasks = (await response.json()) as Array<Record<string, any>>;
      const names = tasks.map((task) => task.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'compute',
          'factorial',
          'matrix-multiply',
          'hash',
          'compress',
          'json-stats',
        ]),
      );
      const compute = tasks.find((task) => task.name === 'compute')!;
      expect(compute).toMatchObject({
        binary: false,
        description: expect.any(String),
        limits: expect.any(Object),
      });
      expect(compute.input.properties.iterations).toMatchObject({ default: 10_000_000 });
      const hash = tasks.find((task) => task.name === 'hash')!;
      expect(hash).toMatchObject({ binary: true, contentTypes: ['application/octet-stream'] });
    });
  });

  describe('POST /api/tasks/:name', () => {
    it('runs a JSON task and answers with its result and timing', async () => {
      const response = await postJson(`${service.url}/api/tasks/factorial`, { n: 20 });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, any>;
      expect(body).toMatchObject({ task: 'factorial', result: { digits: '2432902008176640000' } });
      expect(body.timing).toEqual({ waitMs: expect.any(Number), runMs: expect.any(Number) });
    });

    it('hashes a raw body', async () => {
      const bytes = Buffer.from('corepool '.repeat(20_000));
      const response = await fetch(`${service.url}/api/tasks/hash?algorithm=sha256`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, any>;
      expect(body.result.digest).toBe(createHash('sha256').update(bytes).digest('hex'));
    });

    it('compresses a raw body and answers with the bytes', async () => {
      const bytes = Buffer.from('abcabcabc'.repeat(5_000));
      const response = await fetch(`${service.url}/api/tasks/compress?format=gzip&level=9`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/gzip');
      expect(Number(response.headers.get('x-task-run-ms'))).toBeGreaterThanOrEqual(0);
      const compressed = Buffer.from(await response.arrayBuffer());
      expect(compressed.length).toBeLessThan(bytes.length);
      expect(gunzipSync(compressed).equals(bytes)).toBe(true);
    });

    it('parses a JSON document for json-stats in the thread, not on the event loop', async () => {
      const records = [{ price: 1 }, { price: 3 }, { price: 8, name: 'x' }];
      const response = await postJson(`${service.url}/api/tasks/json-stats`, records);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, any>;
      expect(body.result.count).toBe(3);
      expect(body.result.fields.price).toMatchObject({ min: 1, max: 8, sum: 12, mean: 4 });
    });

    it('accepts a json-stats document larger than the JSON body limit, up to the binary one', async () => {
      const records = Array.from({ length: 1_000 }, (_, i) => ({ i }));
      const response = await postJson(`${service.url}/api/tasks/json-stats`, records);
      expect(response.status).toBe(200);
    });
  });

  describe('POST /api/compute', () => {
    it("answers in the tutorial's shape", async () => {
      const response = await postJson(`${service.url}/api/compute`, {
        iterations: 100_000,
        payloadSize: 1_000,
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, any>;
      expect(body).toEqual({
        success: true,
        message: expect.any(String),
        metrics: {
          status: 'success',
          executionTimeMs: expect.any(Number),
          data: {
            computedValue: expect.any(Number),
            processedPayloadLength: 1_000,
            workerId: expect.any(Number),
          },
        },
      });
      expect(body.metrics.data.workerId).toBeGreaterThan(0);
    });

    it('uses the defaults for an empty body', async () => {
      const response = await fetch(`${service.url}/api/compute`, { method: 'POST' });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, any>;
      expect(body.metrics.data.processedPayloadLength).toBe(100_000);
    });
  });

  describe('errors', () => {
    it('400 VALIDATION_FAILED lists each bad field', async () => {
      const response = await postJson(`${service.url}/api/compute`, {
        iterations: 'many',
        payloadSize: -1,
      });
      const problem = await expectProblem(response, 400, 'VALIDATION_FAILED');
      const properties = (problem.errors as Array<{ property: string }>).map(
        (error) => error.property,
      );
      expect(properties).toEqual(expect.arrayContaining(['iterations', 'payloadSize']));
    });

    it('400 VALIDATION_FAILED for an unknown field', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/tasks/factorial`, { n: 3, extra: 1 }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('400 VALIDATION_FAILED for malformed JSON', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/compute`, '{"iterations": 1'),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('400 VALIDATION_FAILED for prototype poisoning', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/compute`, '{"__proto__": {"x": 1}}'),
        400,
        'VALIDATION_FAILED',
      );
      await expectProblem(
        await postJson(`${service.url}/api/compute`, '{"constructor": {"prototype": {"x": 1}}}'),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('400 VALIDATION_FAILED for a body that is not an object', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/tasks/factorial`, [1, 2]),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('400 VALIDATION_FAILED when a thread finds the input unusable', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/tasks/json-stats`, '{"not": "an array"}'),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('404 TASK_NOT_FOUND for an unknown task', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/tasks/nope`, {}),
        404,
        'TASK_NOT_FOUND',
      );
    });

    it('404 ROUTE_NOT_FOUND for an unknown route', async () => {
      await expectProblem(await fetch(`${service.url}/api/nothing-here`), 404, 'ROUTE_NOT_FOUND');
    });

    it('413 PAYLOAD_TOO_LARGE for a JSON body over its limit', async () => {
      const response = await postJson(`${service.url}/api/compute`, {
        iterations: 1,
        pad: 'x'.repeat(5_000),
      });
      await expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('413 PAYLOAD_TOO_LARGE for a raw body over the binary limit', async () => {
      const response = await fetch(`${service.url}/api/tasks/hash`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(300_000),
      });
      await expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('415 UNSUPPORTED_MEDIA_TYPE for the wrong content type', async () => {
      const asText = await fetch(`${service.url}/api/compute`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      await expectProblem(asText, 415, 'UNSUPPORTED_MEDIA_TYPE');
      await expectProblem(
        await postJson(`${service.url}/api/tasks/hash`, { a: 1 }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    });

    it('500 TASK_FAILED with the task’s message', async () => {
      const problem = await expectProblem(
        await postJson(`${service.url}/api/tasks/throw`, { message: 'disk on fire' }),
        500,
        'TASK_FAILED',
      );
      expect(problem.detail).toBe('disk on fire');
    });

    it('500 WORKER_CRASHED when the thread dies', async () => {
      await expectProblem(
        await postJson(`${service.url}/api/tasks/crash`, {}),
        500,
        'WORKER_CRASHED',
      );
      await expect(
        postJson(`${service.url}/api/tasks/factorial`, { n: 5 }),
      ).resolves.toHaveProperty('status', 200);
    });

    it('every response carries a request id, honouring the caller’s', async () => {
      const mine = await fetch(`${service.url}/health/live`, {
        headers: { 'x-request-id': 'abc-123' },
      });
      expect(mine.headers.get('x-request-id')).toBe('abc-123');
      const generated = await fetch(`${service.url}/health/live`);
      expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const unsafe = await fetch(`${service.url}/health/live`, {
        headers: { 'x-request-id': 'a b<script>' },
      });
      expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('GET /health/live and /docs', () => {
    it('answers liveness', async () => {
      const response = await fetch(`${service.url}/health/live`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: 'ok' });
    });

    it('serves the OpenAPI document with each task input schema', async () => {
      const ui = await fetch(`${service.url}/docs`);
      expect(ui.status).toBe(200);
      const document = (await (await fetch(`${service.url}/docs-json`)).json()) as Record<
        string,
        any
      >;
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/api/tasks', '/api/tasks/{name}', '/api/compute']),
      );
      expect(document.components.schemas).toHaveProperty('ComputeInput');
    });
  });
});

describe('HTTP API under pressure', () => {
  let service: RunningApp;
  afterEach(() => service.close());

  it('503 POOL_SATURATED with Retry-After when the queue is full', async () => {
    service = await startApp({ POOL_THREADS: '1', POOL_MAX_QUEUE: '1' });
    const busy = [1, 2].map(() => postJson(`${service.url}/api/tasks/sleep`, { ms: 2_000 }));
    const pool = service.app.get(WorkerPoolService);
    await waitUntil('one task running and one queued', () => {
      const { running, queueSize } = pool.stats();
      return running === 1 && queueSize === 1;
    });
    const response = await postJson(`${service.url}/api/tasks/sleep`, { ms: 10 });
    await expectProblem(response, 503, 'POOL_SATURATED');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await Promise.all(busy)).map((r) => r.status)).toEqual([200, 200]);
  });

  it('504 TASK_TIMEOUT when the deadline passes, and the pool recovers', async () => {
    // The deadline also covers the replacement thread's start (it compiles the
    // task code with tsx in jest), which takes seconds on a loaded machine.
    service = await startApp({ POOL_THREADS: '1', TASK_TIMEOUT_MS: '6000' });
    await expectProblem(await postJson(`${service.url}/api/tasks/spin`, {}), 504, 'TASK_TIMEOUT');
    // The replacement thread compiles the task code (tsx under jest); on a busy
    // machine that alone can outlast the 1.5 s deadline, so the pool may need
    // a few tries to show it has recovered. Every miss must be a timeout.
    let status = 0;
    for (let attempt = 0; attempt < 10 && status !== 200; attempt++) {
      const response = await postJson(`${service.url}/api/tasks/factorial`, { n: 5 });
      status = response.status;
      if (status !== 200) await expectProblem(response, 504, 'TASK_TIMEOUT');
    }
    expect(status).toBe(200);
  });

  it('500 WORKER_OUT_OF_MEMORY when a task exhausts its heap', async () => {
    service = await startApp({ POOL_THREADS: '1', WORKER_MAX_OLD_GENERATION_MB: '32' });
    await expectProblem(
      await postJson(`${service.url}/api/tasks/oom`, {}),
      500,
      'WORKER_OUT_OF_MEMORY',
    );
    await expect(postJson(`${service.url}/api/tasks/factorial`, { n: 5 })).resolves.toHaveProperty(
      'status',
      200,
    );
  });

  it('503 SHUTTING_DOWN with Connection: close once the pool stops accepting', async () => {
    service = await startApp();
    service.app.get(WorkerPoolService).stopAccepting();
    const response = await postJson(`${service.url}/api/tasks/factorial`, { n: 5 });
    expect(response.headers.get('connection')).toBe('close');
    await expectProblem(response, 503, 'SHUTTING_DOWN');
  });

  it('cancels the task when the client disconnects', async () => {
    service = await startApp({ POOL_THREADS: '1' });
    const pool = service.app.get(WorkerPoolService);
    const settled = new Promise<TaskSettled>((resolve) => pool.onSettled(resolve));
    const client = new AbortController();
    const spinning = fetch(`${service.url}/api/tasks/spin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: client.signal,
    });
    // Gone once its task runs: the close must stop a running task, not only a queued one.
    await waitUntil('the task to run', () => pool.stats().running === 1);
    client.abort();
    await expect(spinning).rejects.toThrow();
    expect(await settled).toMatchObject({ task: 'spin', outcome: 'cancelled' });
    await expect(postJson(`${service.url}/api/tasks/factorial`, { n: 5 })).resolves.toHaveProperty(
      'status',
      200,
    );
  });
});
