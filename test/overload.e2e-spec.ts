import { WorkerPoolService } from '@corepool/nestjs';
import { postJson, startApp, type RunningApp } from './support/http-app';
import { waitUntil } from './support/poll';

jest.setTimeout(60_000);

/** Waits until `count` tasks are waiting in the pool's scheduler, so arrival order is known. */
async function untilQueued(service: RunningApp, count: number): Promise<void> {
  const pool = service.app.get(WorkerPoolService);
  await waitUntil(`${count} queued`, () => pool.stats().queueSize >= count, { intervalMs: 5 });
  expect(pool.stats().queueSize).toBe(count);
}

/** Waits until at least `count` tasks are waiting. */
async function untilQueuedAtLeast(service: RunningApp, count: number): Promise<void> {
  const pool = service.app.get(WorkerPoolService);
  await waitUntil(`${count} queued`, () => pool.stats().queueSize >= count, { intervalMs: 5 });
}

/** Waits until a task is on the thread, so what is sent next queues behind it. */
async function untilRunning(service: RunningApp): Promise<void> {
  const pool = service.app.get(WorkerPoolService);
  await waitUntil('a task running', () => pool.stats().running > 0, { intervalMs: 5 });
  expect(pool.stats().running).toBe(1);
}

/** Sends the `sleep` fault task; resolves with its name and status, in the order answers arrive. */
function sleepTask(
  service: RunningApp,
  name: string,
  ms: number,
  headers: Record<string, string> = {},
  answered?: string[],
): Promise<{
  name: string;
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}> {
  return postJson(`${service.url}/api/tasks/sleep`, { ms }, headers).then(async (response) => {
    answered?.push(name);
    return {
      name,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  });
}

/** The scheduler's order is the thread's order when there is one thread. */
const ONE_THREAD = { POOL_THREADS: '1' };
/** A client deadline: the scheduler admits these whenever they fit, overloaded or not. */
const PATIENT = { 'x-request-timeout-ms': '20000' };

describe('overload control (real server, real threads)', () => {
  describe('admission by time and client deadlines', () => {
    let service: RunningApp;

    beforeAll(async () => {
      service = await startApp(ONE_THREAD);
      // Teach the cost model what `sleep` of 300 ms costs, and that `which-process` (the busy
      // task below) costs at least 600 ms: two runs make each sure; a third to be safe.
      for (let run = 0; run < 3; run++) {
        expect((await sleepTask(service, `warm-${run}`, 300)).status).toBe(200);
        const busy = await postJson(`${service.url}/api/tasks/which-process`, { ms: 600 });
        expect(busy.status).toBe(200);
      }
    });
    afterAll(() => service.close());

    it('refuses at once, with 503 and Retry-After, a task that the work ahead leaves no time', async () => {
      const answered: string[] = [];
      // Long enough that the refusal, however slow the machine, comes while it runs; another
      // task than `sleep`, so that the cost model keeps what `sleep` of 300 ms costs. Its
      // floor is 600 ms: until 400 ms into it, 300 ms of `sleep` cannot follow within 500 ms.
      const busy = postJson(`${service.url}/api/tasks/which-process`, { ms: 2_000 }).then(
        (response) => {
          answered.push('busy');
          return response;
        },
      );
      await untilRunning(service);
      // 300 ms of its own fit its 500 ms, but not after what is left of the busy one.
      const hopeless = sleepTask(
        service,
        'hopeless',
        300,
        { 'x-request-timeout-ms': '500' },
        answered,
      );
      const refused = await hopeless;
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'POOL_SATURATED', reason: 'deadline' });
      expect(refused.body.detail).toMatch(/of work ahead of it and \d+ ms of its own; \d+ ms left/);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      // Answered while the thread is still busy with the task ahead of it: not after waiting.
      expect(answered).toEqual(['hopeless']);
      expect((await busy).status).toBe(200);
    });

    it('refuses at once, as too long, a task whose own measured run time exceeds its deadline', async () => {
      const refused = await sleepTask(service, 'too-long', 300, { 'x-request-timeout-ms': '200' });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'POOL_SATURATED', reason: 'too-long' });
    });

    it("stops a task at the client's own deadline, not at TASK_TIMEOUT_MS", async () => {
      const response = await postJson(
        `${service.url}/api/tasks/sleep`,
        { ms: 2000 },
        { 'x-request-timeout-ms': '5000', 'x-envoy-expected-rq-timeout-ms': '600' },
      );
      expect(response.status).toBe(504);
      expect(await response.json()).toMatchObject({ code: 'TASK_TIMEOUT' });
    });

    it('answers 400 INVALID_DEADLINE to a deadline header that is not a number of ms', async () => {
      for (const value of ['soon', '0', '-5', '1.5']) {
        const response = await postJson(
          `${service.url}/api/tasks/sleep`,
          { ms: 1 },
          { 'x-request-timeout-ms': value },
        );
        expect({ value, status: response.status }).toEqual({ value, status: 400 });
        expect(await response.json()).toMatchObject({ code: 'INVALID_DEADLINE' });
      }
    });
  });

  describe('queue discipline', () => {
    it('serves in arrival order while the pool keeps up (FIFO)', async () => {
      const service = await startApp(ONE_THREAD);
      try {
        const answered: string[] = [];
        // Busy until all three wait behind it, however slowly they arrive.
        const all = [sleepTask(service, 'busy', 2_000, PATIENT, answered)];
        await untilRunning(service);
        for (const [index, name] of ['b', 'c', 'd'].entries()) {
          await untilQueued(service, index);
          all.push(sleepTask(service, name, 50, PATIENT, answered));
        }
        await untilQueued(service, 3);
        expect(answered).toEqual([]);
        expect((await Promise.all(all)).map((answer) => answer.status)).toEqual([
          200, 200, 200, 200,
        ]);
        expect(answered).toEqual(['busy', 'b', 'c', 'd']);
      } finally {
        await service.close();
      }
    });

    it('serves the newest waiting task first under sustained overload (adaptive LIFO)', async () => {
      const service = await startApp({
        ...ONE_THREAD,
        SCHEDULER_TARGET_DELAY_MS: '10',
        SCHEDULER_INTERVAL_MS: '50',
      });
      try {
        const answered: string[] = [];
        // Busy until all five wait behind it, however slowly they arrive: the order below then
        // rests only on the waits (far past the 10 ms target) and the tasks (100 ms, twice the
        // 50 ms interval), which a slow machine only lengthens.
        const all = [sleepTask(service, 'busy', 2_000, PATIENT, answered)];
        await untilRunning(service);
        const names = ['b', 'c', 'd', 'e', 'f'];
        for (const [index, name] of names.entries()) {
          await untilQueued(service, index);
          all.push(sleepTask(service, name, 100, PATIENT, answered));
        }
        await untilQueued(service, names.length);
        // A client gives up on its waiting task: the evidence that the standing queue costs answers.
        const leaving = new AbortController();
        const gaveUp = fetch(`${service.url}/api/tasks/sleep`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...PATIENT },
          body: JSON.stringify({ ms: 100 }),
          signal: leaving.signal,
        }).catch((error: unknown) => error);
        await untilQueued(service, names.length + 1);
        leaving.abort();
        await gaveUp;
        await waitUntil(
          'the client that gave up gone from the queue',
          () => service.app.get(WorkerPoolService).stats().queueSize === names.length,
          { intervalMs: 5 },
        );
        expect(answered).toEqual([]);
        expect((await Promise.all(all)).every((answer) => answer.status === 200)).toBe(true);
        // b and c leave in arrival order while CoDel's interval runs; then the newest first.
        expect(answered).toEqual(['busy', 'b', 'c', 'f', 'e', 'd']);
        const health = (await (await fetch(`${service.url}/health`)).json()) as {
          details: { pool: { scheduler: Record<string, unknown> } };
        };
        expect(health.details.pool.scheduler).toMatchObject({
          mode: 'fifo',
          targetDelayMs: 10,
          intervalMs: 50,
          refusals: { deadline: 0, 'too-long': 0, 'queue-delay': 0, backstop: 0 },
        });
      } finally {
        await service.close();
      }
    });

    it('serves a standing queue in arrival order while no client gives up (a patient crowd)', async () => {
      const service = await startApp({
        ...ONE_THREAD,
        SCHEDULER_TARGET_DELAY_MS: '10',
        SCHEDULER_INTERVAL_MS: '50',
      });
      try {
        const answered: string[] = [];
        // No deadline header: before, such a crowd's newcomers were refused for queue delay.
        const all = [sleepTask(service, 'busy', 2_000, {}, answered)];
        await untilRunning(service);
        const names = ['b', 'c', 'd', 'e', 'f'];
        for (const [index, name] of names.entries()) {
          await untilQueued(service, index);
          all.push(sleepTask(service, name, 100, {}, answered));
        }
        await untilQueued(service, names.length);
        expect((await Promise.all(all)).map((answer) => answer.status)).toEqual([
          200, 200, 200, 200, 200, 200,
        ]);
        expect(answered).toEqual(['busy', ...names]);
      } finally {
        await service.close();
      }
    });

    it('lets a trickle client through while another floods the pool', async () => {
      const service = await startApp(ONE_THREAD);
      try {
        const flood = { ...PATIENT, 'x-client-id': 'flood' };
        let floodDone = 0;
        const flooding = Array.from({ length: 20 }, (_, i) =>
          sleepTask(service, `flood-${i}`, 100, flood).then((answer) => {
            floodDone += 1;
            return answer;
          }),
        );
        await untilQueuedAtLeast(service, 10);
        for (let i = 0; i < 5; i++) {
          const answer = await sleepTask(service, `trickle-${i}`, 50, { 'x-client-id': 'trickle' });
          expect(answer.status).toBe(200);
        }
        // In arrival order the trickle would have waited for the whole flood, five times over.
        expect(floodDone).toBeLessThan(20);
        // Should the flood overfill the backstop, it pays with 503s, never the trickle.
        const floodStatuses = new Set((await Promise.all(flooding)).map((answer) => answer.status));
        expect([...floodStatuses].filter((status) => status !== 200 && status !== 503)).toEqual([]);
      } finally {
        await service.close();
      }
    });
  });
});
