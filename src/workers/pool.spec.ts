import { getPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Cancellation, CorepoolError } from '@corepool/core';
import { threadPrioritySupported } from '@corepool/core/host';
import { WorkerPoolService, type TaskSettled } from '@corepool/nestjs';
import { testConfig } from '../../test/support/test-config';
import { codeOf } from '../../test/support/error-code';
import { poolOptionsFrom } from './pool-options';

jest.setTimeout(30_000);

const pools: WorkerPoolService[] = [];

async function startPool(env: Record<string, string> = {}): Promise<WorkerPoolService> {
  const pool = new WorkerPoolService(poolOptionsFrom(testConfig(env)));
  pools.push(pool);
  await pool.start();
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close(1_000)));
});

async function threadIdOf(pool: WorkerPoolService): Promise<number> {
  const { value } = await pool.run('thread-id', {});
  return (value as { threadId: number }).threadId;
}

/** Retries an assertion for a while: threads are replaced asynchronously. */
async function eventually(assertion: () => void, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return assertion();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Samples `stats().threads` every few milliseconds until `stop()`, which returns the samples. */
function sampleThreads(pool: WorkerPoolService): { stop(): number[] } {
  const samples: number[] = [pool.stats().threads];
  const timer = setInterval(() => samples.push(pool.stats().threads), 2);
  return {
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}

/**
 * Follows a task of the fault fixtures that reports progress as its thread
 * starts it: `started` resolves then, so a cancel reaches a running task.
 */
function followStart(): { onProgress: () => void; started: Promise<void> } {
  let resolve: () => void = () => undefined;
  const started = new Promise<void>((done) => (resolve = done));
  return { onProgress: () => resolve(), started };
}

/** The pool is back to full size, with `restarts` threads replaced so far. */
async function fullSize(pool: WorkerPoolService, restarts: number): Promise<void> {
  await eventually(() =>
    expect(pool.stats()).toMatchObject({
      threads: pool.stats().targetThreads,
      threadRestarts: restarts,
    }),
  );
}

describe(WorkerPoolService.name, () => {
  it('runs a task on a worker thread and reports its wait and run time', async () => {
    const pool = await startPool();
    const result = await pool.run('sleep', { ms: 20 });
    expect(result.threadId).toBeGreaterThan(0);
    expect(result.runMs).toBeGreaterThanOrEqual(19);
    expect(result.waitMs).toBeGreaterThanOrEqual(0);
    expect(result.value).toEqual({ sleptMs: 20, threadId: result.threadId });
  });

  it("delivers a task's progress from its thread, the last report before the result, and only to its caller", async () => {
    const pool = await startPool();
    const reports: Array<{ fraction: number }> = [];
    const other: unknown[] = [];
    const [result] = await Promise.all([
      pool.run('compute', { iterations: 200_000 }, { onProgress: (p) => reports.push(p) }),
      pool.run('compute', { iterations: 10 }, { onProgress: (p) => other.push(p) }),
    ]);
    expect(result.threadId).toBeGreaterThan(0);
    // Received by the time run() resolved: the answer waited for the reports it counted.
    expect(reports.at(-1)).toMatchObject({ fraction: 1 });
    expect(other.at(-1)).toMatchObject({ fraction: 1 });
    expect(reports.every(({ fraction }) => fraction >= 0 && fraction <= 1)).toBe(true);
  });

  it('starts every thread warm before it reports ready', async () => {
    const pool = await startPool({ POOL_THREADS: '3' });
    expect(pool.stats()).toMatchObject({
      ready: true,
      threads: 3,
      targetThreads: 3,
      mode: 'threads',
    });
  });

  it('rejects at once with POOL_SATURATED and a Retry-After when the queue is full', async () => {
    const pool = await startPool({ POOL_THREADS: '1', POOL_MAX_QUEUE: '2' });
    await pool.run('sleep', { ms: 300 }); // measured run time feeds Retry-After
    const accepted = [1, 2, 3].map(() => pool.run('sleep', { ms: 300 }));
    const rejection = pool.run('sleep', { ms: 300 });
    await expect(rejection).rejects.toMatchObject({ code: 'POOL_SATURATED' });
    const error = (await rejection.catch((e: unknown) => e)) as CorepoolError;
    expect(Number(error.facts.retryAfterSeconds)).toBeGreaterThanOrEqual(1);
    await expect(Promise.all(accepted)).resolves.toHaveLength(3);
  });

  it('estimates Retry-After from measured run times, not a constant', async () => {
    const pool = await startPool({ POOL_THREADS: '1', POOL_MAX_QUEUE: '3' });
    await pool.run('sleep', { ms: 1_500 });
    const accepted = [1, 2, 3, 4].map(() => pool.run('sleep', { ms: 1_500 }));
    const error = (await pool.run('sleep', {}).catch((e: unknown) => e)) as CorepoolError;
    // Three queued tasks of ~1.5 s each on one thread: several seconds, not 1.
    expect(Number(error.facts.retryAfterSeconds)).toBeGreaterThanOrEqual(4);
    await Promise.all(accepted);
  });

  it('starts queued tasks in the order they arrived', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    const finished: number[] = [];
    // One thread: each task finishes before the next one starts.
    const tasks = [0, 1, 2, 3, 4, 5].map((order) =>
      pool.run('sleep', { ms: 30 }).then(() => void finished.push(order)),
    );
    await Promise.all(tasks);
    expect(finished).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('sheds a queued task with POOL_SATURATED once it can no longer start before its deadline', async () => {
    const pool = await startPool({ POOL_THREADS: '1', TASK_TIMEOUT_MS: '800' });
    for (let run = 0; run < 3; run++) await pool.run('sleep', { ms: 10 });
    const running = pool.run('sleep', { ms: 600 });
    // Arrived 500 ms ago: 300 ms left, spent waiting behind the running task
    // (admitted: sleep was measured short). Shed once it has less time left than sleep takes.
    const queued = pool.run('sleep', { ms: 10 }, { arrivedAt: performance.now() - 500 });
    const error = (await queued.catch((e: unknown) => e)) as CorepoolError;
    expect(error).toMatchObject({ code: 'POOL_SATURATED', facts: { reason: 'too-long' } });
    await expect(running).resolves.toBeDefined();
    expect(pool.stats().threadRestarts).toBe(0);
  });

  it('stops a task that runs past its deadline and replaces its thread', async () => {
    const pool = await startPool({ POOL_THREADS: '1', TASK_TIMEOUT_MS: '1000' });
    const before = await threadIdOf(pool);
    // The replacement has loaded its code (under jest it compiles TypeScript, which can
    // take longer than the 1 s deadline on a busy machine) before the next task runs.
    const replacementStarted = new Promise<void>((resolve) => {
      const stop = pool.onThreadStarted(() => {
        stop();
        resolve();
      });
    });
    expect(await codeOf(pool.run('spin', {}))).toBe('TASK_TIMEOUT');
    await fullSize(pool, 1);
    await replacementStarted;
    expect(await threadIdOf(pool)).not.toBe(before);
  });

  it('cancels a queued task when the client goes away', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    const settled: TaskSettled[] = [];
    pool.onSettled((event) => settled.push(event));
    const running = pool.run('sleep', { ms: 300 });
    const client = new AbortController();
    const queued = pool.run('sleep', { ms: 300 }, { signal: client.signal });
    client.abort();
    expect(await codeOf(queued)).toBe('TASK_CANCELLED');
    await running;
    expect(settled.map((event) => event.outcome).sort()).toEqual(['cancelled', 'success']);
    expect(pool.stats().threadRestarts).toBe(0);
  });

  it('terminates a running task that ignores its cancellation once the grace has passed', async () => {
    const pool = await startPool({ POOL_THREADS: '1', CANCEL_GRACE_MS: '200' });
    const before = await threadIdOf(pool);
    const client = new Cancellation();
    const start = followStart();
    const spinning = pool.run('spin', {}, { signal: client, onProgress: start.onProgress });
    await start.started;
    client.abort('client gone');
    expect(await codeOf(spinning)).toBe('TASK_CANCELLED');
    await fullSize(pool, 1);
    expect(await threadIdOf(pool)).not.toBe(before);
    expect(pool.stats()).toMatchObject({
      tasksStopped: { cooperative: 0, terminated: 1 },
      threadsReplaced: { terminated: 1 },
    });
  });

  it('lets a cooperative task stop on its own when the client goes away, keeping its thread', async () => {
    const pool = await startPool({ POOL_THREADS: '1', CANCEL_GRACE_MS: '5000' });
    const before = await threadIdOf(pool);
    const client = new Cancellation();
    const start = followStart();
    const spinning = pool.run(
      'cooperative-spin',
      {},
      { signal: client, onProgress: start.onProgress },
    );
    await start.started;
    client.abort('client gone');
    expect(await codeOf(spinning)).toBe('TASK_CANCELLED');
    // The same thread serves the next task: it was never stopped.
    expect(await threadIdOf(pool)).toBe(before);
    expect(pool.stats()).toMatchObject({
      threads: 1,
      threadRestarts: 0,
      tasksStopped: { cooperative: 1, terminated: 0 },
    });
  });

  it('answers TASK_TIMEOUT for a cooperative task past its deadline, keeping its thread', async () => {
    const pool = await startPool({
      POOL_THREADS: '1',
      TASK_TIMEOUT_MS: '500',
      CANCEL_GRACE_MS: '5000',
    });
    const before = await threadIdOf(pool);
    expect(await codeOf(pool.run('cooperative-spin', {}))).toBe('TASK_TIMEOUT');
    expect(await threadIdOf(pool)).toBe(before);
    expect(pool.stats().threadRestarts).toBe(0);
  });

  it('aborts the signal of an asynchronous task, which then ends on its own', async () => {
    const pool = await startPool({ POOL_THREADS: '1', CANCEL_GRACE_MS: '5000' });
    const before = await threadIdOf(pool);
    const client = new Cancellation();
    const start = followStart();
    const waiting = pool.run('signal-wait', {}, { signal: client, onProgress: start.onProgress });
    await start.started;
    client.abort('client gone');
    expect(await codeOf(waiting)).toBe('TASK_CANCELLED');
    expect(await threadIdOf(pool)).toBe(before);
    expect(pool.stats().tasksStopped).toEqual({ cooperative: 1, terminated: 0 });
  });

  it('answers WORKER_OUT_OF_MEMORY when a task exhausts its heap, and no other task fails', async () => {
    const pool = await startPool({ POOL_THREADS: '2', WORKER_MAX_OLD_GENERATION_MB: '32' });
    const neighbours = [1, 2, 3, 4].map(() => pool.run('sleep', { ms: 50 }));
    expect(await codeOf(pool.run('oom', {}))).toBe('WORKER_OUT_OF_MEMORY');
    await expect(Promise.all(neighbours)).resolves.toHaveLength(4);
    await fullSize(pool, 1);
  });

  it('answers WORKER_CRASHED when a thread dies, and replaces it', async () => {
    const pool = await startPool({ POOL_THREADS: '2' });
    const neighbours = [1, 2, 3, 4].map(() => pool.run('sleep', { ms: 50 }));
    expect(await codeOf(pool.run('crash', {}))).toBe('WORKER_CRASHED');
    await expect(Promise.all(neighbours)).resolves.toHaveLength(4);
    await fullSize(pool, 1);
  });

  describe('batches of small tasks', () => {
    /** One thread, busy for a while, and small tasks queued behind it: they go in one batch. */
    async function queuedBehindBusyThread(env: Record<string, string> = {}) {
      const pool = await startPool({
        POOL_THREADS: '1',
        // Tasks never measured are estimated at the prior (50 ms): let them batch.
        SCHEDULER_BATCH_MAX_MS: '1000',
        ...env,
      });
      const busy = pool.run('sleep', { ms: 200 });
      return { pool, busy };
    }

    it('runs small tasks that wait in one message to their thread, each answered on its own', async () => {
      const { pool, busy } = await queuedBehindBusyThread();
      const ids = [1, 2, 3].map(() => pool.run('thread-id', {}));
      const thrown = codeOf(pool.run('throw', { message: 'only me' }));
      const more = [4, 5].map(() => pool.run('thread-id', {}));
      await busy;
      const threadIds = (await Promise.all([...ids, ...more])).map((result) => result.value);
      expect(await thrown).toBe('TASK_FAILED');
      const { threadId } = (await busy).value as { threadId: number };
      expect(threadIds).toEqual(Array.from({ length: 5 }, () => ({ threadId })));
      expect(pool.stats().scheduler?.batches).toEqual({ sent: 1, tasks: 6 });
      expect(pool.stats()).toMatchObject({ threadRestarts: 0, completed: 7 });
    });

    it('terminates only for the task that ignores its cancellation; the rest of its batch runs again', async () => {
      const { pool, busy } = await queuedBehindBusyThread({ CANCEL_GRACE_MS: '200' });
      const client = new Cancellation();
      const start = followStart();
      const spinning = pool.run('spin', {}, { signal: client, onProgress: start.onProgress });
      const neighbours = [1, 2, 3].map(() => pool.run('thread-id', {}));
      const { threadId: first } = (await busy).value as { threadId: number };
      // First in the batch: its thread has started it.
      await start.started;
      client.abort('client gone');
      expect(await codeOf(spinning)).toBe('TASK_CANCELLED');
      const ran = (await Promise.all(neighbours)).map((result) => result.value);
      // Run again, alone, on the replacement thread.
      expect(ran).not.toContainEqual({ threadId: first });
      expect(pool.stats().scheduler?.batches).toEqual({ sent: 1, tasks: 4 });
      expect(pool.stats()).toMatchObject({
        tasksStopped: { cooperative: 0, terminated: 1 },
        threadsReplaced: { terminated: 1, crash: 0 },
      });
    });

    it('runs the rest of a batch again when its thread crashes: only the crashing task fails', async () => {
      const { pool, busy } = await queuedBehindBusyThread();
      const neighbours = [1, 2].map(() => pool.run('thread-id', {}));
      const crashing = codeOf(pool.run('crash', {}));
      const after = pool.run('thread-id', {});
      await busy;
      expect(await crashing).toBe('WORKER_CRASHED');
      await expect(Promise.all([...neighbours, after])).resolves.toHaveLength(3);
      // The batch's thread, then the crashing task's own when it ran alone.
      await fullSize(pool, 2);
      expect(pool.stats().threadsReplaced.crash).toBe(2);
    });
  });

  it('lowers a thread to WORKER_NICE_INCREMENT only after it has loaded its code, replacements too', async () => {
    const pool = await startPool({ POOL_THREADS: '1', WORKER_NICE_INCREMENT: '7' });
    const base = getPriority();
    // Only Linux gives each thread its own nice value; elsewhere the setting is ignored.
    const lowered = threadPrioritySupported ? Math.min(19, base + 7) : base;
    const expected = { atLoad: base, now: lowered };
    expect((await pool.run('priority', {})).value).toEqual(expected);
    expect(await codeOf(pool.run('crash', {}))).toBe('WORKER_CRASHED');
    await fullSize(pool, 1);
    expect((await pool.run('priority', {})).value).toEqual(expected);
    // The event loop's own thread keeps its priority.
    expect(getPriority()).toBe(base);
  });

  it('lowers a fresh thread whose first tasks come in a batch as well', async () => {
    const pool = await startPool({
      POOL_THREADS: '1',
      WORKER_NICE_INCREMENT: '7',
      SCHEDULER_BATCH_MAX_MS: '1000',
    });
    const base = getPriority();
    const lowered = threadPrioritySupported ? Math.min(19, base + 7) : base;
    expect(await codeOf(pool.run('crash', {}))).toBe('WORKER_CRASHED');
    // They wait for the replacement, which takes them in one message.
    const values = await Promise.all([1, 2, 3].map(() => pool.run('priority', {})));
    expect(pool.stats().scheduler?.batches.sent).toBeGreaterThan(0);
    expect(values.map((result) => result.value)).toEqual(
      values.map(() => ({ atLoad: base, now: lowered })),
    );
  });

  it('answers TASK_FAILED with the message when a task throws, keeping the thread', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    const before = await threadIdOf(pool);
    const error = (await pool
      .run('throw', { message: 'bad sector' })
      .catch((e: unknown) => e)) as CorepoolError;
    expect(error).toMatchObject({ code: 'TASK_FAILED', message: 'bad sector' });
    expect(await threadIdOf(pool)).toBe(before);
    expect(pool.stats().threadRestarts).toBe(0);
  });

  it('recycles after about WORKER_MAX_TASKS tasks, never below its size, failing none', async () => {
    const pool = await startPool({ POOL_THREADS: '1', WORKER_MAX_TASKS: '3' });
    const sizes = sampleThreads(pool);
    const ids = new Set<number>();
    // Until two threads have been recycled: each keeps working until its replacement is up.
    for (let i = 0; i < 500 && pool.stats().threadsRecycled < 2; i++) {
      ids.add(await threadIdOf(pool));
    }
    await fullSize(pool, 0);
    expect(Math.min(...sizes.stop())).toBe(1);
    expect(ids.size).toBeGreaterThanOrEqual(2);
    expect(pool.stats()).toMatchObject({ threadRestarts: 0 });
    expect(pool.stats().threadsReplaced.recycled_tasks).toBeGreaterThanOrEqual(2);
  });

  it('recycles under concurrent load, never below its size, failing none', async () => {
    const pool = await startPool({
      POOL_THREADS: '2',
      WORKER_MAX_TASKS: '2',
      POOL_MAX_QUEUE: '100',
    });
    const sizes = sampleThreads(pool);
    const results = await Promise.all(
      Array.from({ length: 40 }, () => pool.run('sleep', { ms: 20 })),
    );
    expect(results).toHaveLength(40);
    await eventually(() => expect(pool.stats().threadsRecycled).toBeGreaterThanOrEqual(1));
    await fullSize(pool, 0);
    expect(Math.min(...sizes.stop())).toBe(2);
  });

  it('recycles a thread whose heap passed WORKER_RECYCLE_HEAP_MB after a task, failing none', async () => {
    const pool = await startPool({ POOL_THREADS: '1', WORKER_RECYCLE_HEAP_MB: '40' });
    const sizes = sampleThreads(pool);
    const before = await threadIdOf(pool);
    // ~48 MB of numbers kept alive by the thread: the task succeeds, the thread is then due.
    await expect(pool.run('retain-heap', { mb: 48 })).resolves.toMatchObject({
      value: { threadId: before },
    });
    await eventually(() => expect(pool.stats().threadsReplaced.recycled_memory).toBe(1), 15_000);
    await fullSize(pool, 0);
    expect(await threadIdOf(pool)).not.toBe(before);
    expect(Math.min(...sizes.stop())).toBe(1);
  });

  it('stops a task over WORKER_MAX_MEMORY_MB (buffers outside the heap) and fails nothing else', async () => {
    const pool = await startPool({ POOL_THREADS: '2', WORKER_MAX_MEMORY_MB: '256' });
    const neighbours = [1, 2, 3, 4].map(() => pool.run('sleep', { ms: 50 }));
    const error = (await pool.run('grow-buffers', {}).catch((e: unknown) => e)) as CorepoolError;
    expect(error).toMatchObject({ code: 'WORKER_OUT_OF_MEMORY', facts: { limit: 256 } });
    await expect(Promise.all(neighbours)).resolves.toHaveLength(4);
    await fullSize(pool, 1);
    expect(pool.stats().threadsReplaced.out_of_memory).toBe(1);
  });

  it('transfers a large binary body to the thread instead of cloning it', async () => {
    const pool = await startPool();
    const body = new Uint8Array(64 * 1024).fill(7);
    const { value } = await pool.run('byte-length', {}, { body });
    expect(value).toEqual({ byteLength: 64 * 1024 });
    expect(body.byteLength).toBe(0); // detached: it moved, nothing was copied
  });

  it('clones a small body, and never moves a buffer it shares with others', async () => {
    const pool = await startPool();
    const small = new Uint8Array(1024);
    await expect(pool.run('byte-length', {}, { body: small })).resolves.toMatchObject({
      value: { byteLength: 1024 },
    });
    expect(small.byteLength).toBe(1024);
    const shared = new Uint8Array(200 * 1024);
    const view = shared.subarray(10, 10 + 100 * 1024);
    await expect(pool.run('byte-length', {}, { body: view })).resolves.toMatchObject({
      value: { byteLength: 100 * 1024 },
    });
    expect(shared.byteLength).toBe(200 * 1024);
  });

  it('runs tasks inline on the event loop when POOL_THREADS=0', async () => {
    const pool = await startPool({ POOL_THREADS: '0' });
    const result = await pool.run('sleep', { ms: 10 });
    expect(result.threadId).toBe(0);
    expect(pool.stats()).toMatchObject({ mode: 'inline', threads: 0, ready: true });
  });

  it('drains queued and running tasks on close, then refuses new ones', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    const tasks = [1, 2, 3].map(() => pool.run('sleep', { ms: 150 }));
    await expect(pool.close(5_000)).resolves.toBe(true);
    await expect(Promise.all(tasks)).resolves.toHaveLength(3);
    expect(await codeOf(pool.run('sleep', {}))).toBe('SHUTTING_DOWN');
  });

  it('cancels what is left with SHUTTING_DOWN when the drain budget runs out', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    const tasks = [1, 2].map((): Promise<string> => codeOf(pool.run('sleep', { ms: 3_000 })));
    await expect(pool.close(200)).resolves.toBe(false);
    expect(await Promise.all(tasks)).toEqual(['SHUTTING_DOWN', 'SHUTTING_DOWN']);
  });

  it('reports wait and run percentiles and counts completed tasks', async () => {
    const pool = await startPool({ POOL_THREADS: '1' });
    await Promise.all([1, 2, 3].map(() => pool.run('sleep', { ms: 30 })));
    const stats = pool.stats();
    expect(stats.completed).toBe(3);
    expect(stats.runMs.count).toBe(3);
    expect(stats.runMs.p95).toBeGreaterThanOrEqual(29);
    expect(stats.waitMs.p95).toBeGreaterThanOrEqual(20); // the third waited for two others
  });

  it('answers TASK_NOT_FOUND for a name it does not know', async () => {
    const pool = await startPool();
    expect(await codeOf(pool.run('nope', {}))).toBe('TASK_NOT_FOUND');
  });
});
