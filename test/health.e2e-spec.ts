import { Agent, get } from 'node:http';
import { postJson, startApp, type RunningApp } from './support/http-app';

jest.setTimeout(60_000);

interface Sample {
  readonly status: number;
  readonly queueSize: number;
}

/** `200@0×3 503@5×2 …`: consecutive equal samples folded into one. */
function runs(samples: readonly Sample[]): string {
  const folded: string[] = [];
  let previous = '';
  let count = 0;
  for (const sample of [...samples, undefined]) {
    const key = sample === undefined ? '' : `${sample.status}@${sample.queueSize}`;
    if (key === previous) {
      count += 1;
      continue;
    }
    if (count > 0) folded.push(`${previous}×${count}`);
    previous = key;
    count = 1;
  }
  return folded.join(' ');
}

describe('health probes (real server, real threads)', () => {
  let service: RunningApp;

  // High-water 0.5 of a queue of 6: readiness fails at 3 queued and recovers at 1.
  beforeAll(async () => {
    service = await startApp({
      POOL_THREADS: '1',
      POOL_MAX_QUEUE: '6',
      READY_QUEUE_HIGH_WATER: '0.5',
    });
  });
  afterAll(() => service.close());

  it('reports pool, event loop and memory details on GET /health', async () => {
    const response = await fetch(`${service.url}/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.status).toBe('ok');
    expect(body.details).toMatchObject({
      lifecycle: { status: 'up', phase: 'serving' },
      pool: {
        status: 'up',
        threads: 1,
        utilization: expect.any(Number),
        queueSize: 0,
        maxQueue: 6,
        waitP95Ms: expect.any(Number),
        runP95Ms: expect.any(Number),
      },
      eventLoop: { status: 'up', delayP99Ms: expect.any(Number), limitMs: 200 },
      memory: { status: 'up', heapUsedBytes: expect.any(Number) },
    });
  });

  it('keeps the connection of a liveness probe alive (a direct route answers before Node marks a GET complete)', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ports: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await new Promise<{ connection?: string; port?: number; status?: number }>(
          (done, fail) => {
            get(`${service.url}/health/live`, { agent }, (response) => {
              const port = response.socket.localPort;
              response.resume();
              response.once('end', () =>
                done({
                  connection: response.headers.connection,
                  port,
                  status: response.statusCode,
                }),
              );
            }).once('error', fail);
          },
        );
        expect(answer).toMatchObject({ status: 200, connection: 'keep-alive' });
        ports.push(answer.port ?? -1);
      }
    } finally {
      agent.destroy();
    }
    // One connection for all three: none was closed after its answer.
    expect(new Set(ports).size).toBe(1);
  });

  it('fails readiness while the queue is saturated, stays failed until it drains, and recovers', async () => {
    const tasks = Array.from({ length: 6 }, () =>
      postJson(`${service.url}/api/tasks/sleep`, { ms: 800 }).then((response) => response.status),
    );
    let settled = false;
    const allSettled = Promise.all(tasks).finally(() => {
      settled = true;
    });

    const samples: Sample[] = [];
    const liveWhileSaturated: number[] = [];
    // Sampled until the tasks are done and readiness is back, so the sample that recovered is seen.
    while (!settled || samples.at(-1)?.status !== 200) {
      const response = await fetch(`${service.url}/health/ready`);
      const body = (await response.json()) as any;
      samples.push({ status: response.status, queueSize: body.details.pool.queueSize });
      if (response.status === 503) {
        liveWhileSaturated.push((await fetch(`${service.url}/health/live`)).status);
      }
      await new Promise((done) => setTimeout(done, 25));
    }
    expect(await allSettled).toEqual([200, 200, 200, 200, 200, 200]);

    const firstDown = samples.findIndex((sample) => sample.status === 503);
    const lastDown = samples.map((sample) => sample.status).lastIndexOf(503);
    console.log(`readiness (status@queue ×samples): ${runs(samples)}`);
    expect(firstDown).toBeGreaterThanOrEqual(0);
    // Saturated at the high-water mark (3)...
    expect(samples[firstDown]!.queueSize).toBeGreaterThanOrEqual(3);
    // ...no flapping: once down, it stays down until it recovers for good...
    expect(samples.slice(firstDown, lastDown + 1).every((s) => s.status === 503)).toBe(true);
    // ...and it stayed down below the mark (hysteresis), recovering only at the low mark (1).
    expect(samples.some((s) => s.status === 503 && s.queueSize === 2)).toBe(true);
    expect(samples[lastDown + 1]?.queueSize).toBeLessThanOrEqual(1);
    // Liveness never depends on the pool's load.
    expect(liveWhileSaturated.length).toBeGreaterThan(0);
    expect(liveWhileSaturated.every((status) => status === 200)).toBe(true);
  });
});
