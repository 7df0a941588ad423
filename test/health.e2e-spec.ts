import { Agent, get } from 'node:http';
import { postJson, startApp, type RunningApp } from './support/http-app';
import { steadyLoad } from './support/load';
import { trigger, waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';

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

describe('readiness by default: can serve, not busy (real server, real threads)', () => {
  let service: RunningApp;
  const ready = async () => {
    const response = await fetch(`${service.url}/health/ready`);
    return { status: response.status, body: (await response.json()) as any };
  };

  // One thread, so two tasks are enough to saturate it; a wedge is called after 1 s.
  beforeAll(async () => {
    service = await startApp({
      POOL_THREADS: '1',
      TASK_TIMEOUT_MS: '60000',
      READY_PROGRESS_TIMEOUT_MS: '1000',
      // The app runs in jest's own process, whose event loop a loaded machine
      // delays: that check has its own test below, not this one.
      READY_MAX_EVENT_LOOP_DELAY_MS: '60000',
    });
  });
  afterAll(() => service.close());

  it('stays ready while the pool is saturated, and says so in the details', async () => {
    const tasks = Array.from({ length: 6 }, () =>
      postJson(`${service.url}/api/tasks/sleep`, { ms: 300 }).then((response) => response.status),
    );
    let settled = false;
    const allSettled = Promise.all(tasks).finally(() => {
      settled = true;
    });
    const statuses: number[] = [];
    const saturatedDetails: number[] = [];
    while (!settled) {
      const { status, body } = await ready();
      if (body.details.pool.saturated === true) statuses.push(status);
      const details = await fetch(`${service.url}/health`);
      const detailed = (await details.json()) as any;
      if (detailed.details.pool.saturated === true) saturatedDetails.push(details.status);
    }
    expect(await allSettled).toEqual([200, 200, 200, 200, 200, 200]);
    // Probes came while tasks waited for the one busy thread, and every one was ready.
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(saturatedDetails.length).toBeGreaterThan(0);
    expect(new Set(saturatedDetails)).toEqual(new Set([200]));
  });

  it('fails readiness with the reason once tasks wait and none finished for READY_PROGRESS_TIMEOUT_MS, and recovers', async () => {
    // A task that never yields holds the only thread; the second one waits behind it.
    const clients = new AbortController();
    const stuck = Array.from({ length: 2 }, () =>
      fetch(`${service.url}/api/tasks/sleep`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms: 50_000 }),
        signal: clients.signal,
      }).catch(() => 'aborted'),
    );
    try {
      await waitUntil('readiness to fail', async () => (await ready()).status === 503);
      const { status, body } = await ready();
      expect(status).toBe(503);
      expect(body.error.pool).toMatchObject({
        status: 'down',
        saturated: true,
        progressTimeoutMs: 1000,
        message: expect.stringContaining('the pool is wedged'),
      });
      expect(body.error.pool.stalledMs).toBeGreaterThanOrEqual(1000);
      expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
    } finally {
      // The clients leave: the waiting task goes, the stuck one's thread is stopped and replaced.
      clients.abort();
      await Promise.all(stuck);
    }
    await waitUntil('readiness to recover', async () => (await ready()).status === 200);
  });
});

describe('health probes with READY_QUEUE_HIGH_WATER set (real server, real threads)', () => {
  let service: RunningApp;

  // High-water 0.5 of a queue of 6: readiness fails at 3 queued and recovers at 1.
  beforeAll(async () => {
    service = await startApp({
      POOL_THREADS: '1',
      POOL_MAX_QUEUE: '6',
      READY_QUEUE_HIGH_WATER: '0.5',
      READY_MAX_EVENT_LOOP_DELAY_MS: '60000',
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
        saturated: false,
        stalledMs: 0,
        waitP95Ms: expect.any(Number),
        runP95Ms: expect.any(Number),
      },
      eventLoop: { status: 'up', delayP99Ms: expect.any(Number), limitMs: 60000 },
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

describe('readiness on event-loop delay (the built service, a real process)', () => {
  let service: ServiceProcess;
  const probe = async (path: string) => {
    const response = await fetch(`${service.url}${path}`);
    return { status: response.status, body: (await response.json()) as any };
  };

  // POOL_THREADS=0 runs tasks inline on the event loop (kept for comparison): a `sleep`
  // task there blocks the loop for its whole length, as CPU work on the loop would.
  beforeAll(async () => {
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '0',
      READY_MAX_EVENT_LOOP_DELAY_MS: '100',
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('fails readiness with the delay while the loop is blocked, stays live, and recovers', async () => {
    await waitUntil(
      'readiness before the load',
      async () => (await probe('/health/ready')).status === 200,
    );
    const stop = trigger();
    // One task at a time, back to back: the loop is blocked 300 ms of every ~300 ms.
    const load = steadyLoad({
      url: service.url,
      path: '/api/tasks/sleep',
      body: { ms: 300 },
      concurrency: 1,
      until: stop.promise,
    });
    let down: any;
    const live: number[] = [];
    try {
      await waitUntil('readiness to fail on the event-loop delay', async () => {
        const ready = await probe('/health/ready');
        live.push((await probe('/health/live')).status);
        if (ready.status === 503) down = ready.body;
        return ready.status === 503;
      });
    } finally {
      stop.fire();
    }
    // The event loop is the one reason: the pool and memory stay up.
    expect(Object.keys(down.error)).toEqual(['eventLoop']);
    expect(down.error.eventLoop).toMatchObject({
      status: 'down',
      limitMs: 100,
      message: 'event-loop delay is past its limit',
    });
    expect(down.error.eventLoop.delayP99Ms).toBeGreaterThan(100);
    expect(live.length).toBeGreaterThan(0);
    expect(new Set(live)).toEqual(new Set([200]));
    expect((await load).failed).toEqual({});
    await waitUntil(
      'readiness to recover',
      async () => (await probe('/health/ready')).status === 200,
    );
    const { body } = await probe('/health/ready');
    expect(body.details.eventLoop.delayP99Ms).toBeLessThanOrEqual(100);
  });
});
