import { performance } from 'node:perf_hooks';
import { WorkerPoolService } from '@corepool/nestjs';
import { postJson, startApp, type RunningApp } from './support/http-app';
import { describeCounts, killFailures, steadyLoad, type LoadCounts } from './support/load';
import { startService, type ServiceProcess } from './support/service-process';

// Faults under a steady mixed load. Each test counts every request it sent (sent, succeeded,
// failed by code) and prints the counts, so a reader can check that nothing was lost.

jest.setTimeout(120_000);

/** Per request; a request that takes longer counts as a hang. */
const REQUEST_BOUND_MS = 30_000;

interface Answer {
  status: number;
  /** The problem's code, `ok`, or `network error` when no answer came. */
  outcome: string;
  retryAfter: string | null;
}

async function call(url: string, body: unknown): Promise<Answer> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    const text = await response.text();
    const outcome = response.ok
      ? 'ok'
      : ((JSON.parse(text) as { code?: string }).code ?? `HTTP ${response.status}`);
    return { status: response.status, outcome, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    const name = (error as Error).name;
    return {
      status: 0,
      outcome: name === 'TimeoutError' ? 'hang' : 'network error',
      retryAfter: null,
    };
  }
}

function tally(answers: readonly Answer[]): LoadCounts {
  const counts: LoadCounts = { sent: answers.length, succeeded: 0, failed: {} };
  for (const { outcome } of answers) {
    if (outcome === 'ok') counts.succeeded += 1;
    else counts.failed[outcome] = (counts.failed[outcome] ?? 0) + 1;
  }
  return counts;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** True once `threads` distinct threads have run a `thread-id` task (within 30 s). */
async function everyThreadAnswered(url: string, threads: number): Promise<boolean> {
  const seen = new Set<number>();
  const until = Date.now() + 30_000;
  while (seen.size < threads && Date.now() < until) {
    const answers = await Promise.all(
      Array.from({ length: threads * 2 }, () => postJson(`${url}/api/tasks/thread-id`, {})),
    );
    for (const response of answers) {
      const body = (await response.json()) as { result?: { threadId?: number } };
      if (body.result?.threadId !== undefined) seen.add(body.result.threadId);
    }
    if (seen.size < threads) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return seen.size >= threads;
}

/** pids of the HTTP processes that have started their pool, from their log lines. */
function serverPids(service: ServiceProcess): number[] {
  return service.lines
    .filter((line) => line.includes('worker threads ready'))
    .map((line) => (JSON.parse(line) as { pid: number }).pid);
}

describe('Faults under load', () => {
  describe('poison tasks mixed with good ones', () => {
    let service: RunningApp;
    afterAll(() => service.close());

    it('fails only the poison requests, each with its code, and the pool returns to full size', async () => {
      service = await startApp({
        POOL_THREADS: '2',
        // Long enough that a heap filling up under a loaded machine still ends in
        // WORKER_OUT_OF_MEMORY, not in the deadline; only `spin` runs into it.
        TASK_TIMEOUT_MS: '12000',
        WORKER_MAX_OLD_GENERATION_MB: '32',
      });
      const pool = service.app.get(WorkerPoolService);
      const poisons = [
        { task: 'throw', code: 'TASK_FAILED' },
        { task: 'crash', code: 'WORKER_CRASHED' },
        { task: 'oom', code: 'WORKER_OUT_OF_MEMORY' },
        { task: 'spin', code: 'TASK_TIMEOUT' },
      ];
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const good = steadyLoad({
        url: service.url,
        path: '/api/tasks/factorial',
        body: { n: 300 },
        concurrency: 2,
        until: stopped,
        maxPerWorker: 5_000,
      });
      // One poison at a time, each once the pool is whole again, twice round (`spin` once, it
      // costs a whole deadline): a thread is always left for the good requests.
      const poisonAnswers: Array<{ task: string; expected: string; answer: Answer }> = [];
      const whole = () => pool.stats().threads === pool.stats().targetThreads;
      for (let round = 0; round < 2; round++) {
        for (const { task, code } of poisons) {
          if (task === 'spin' && round > 0) continue;
          expect(await waitFor(whole, 20_000)).toBe(true);
          // A replacement thread loads its task code on its first task (seconds under jest's
          // TypeScript loader on a loaded machine), which would count against the poison's
          // deadline: first every thread answers once.
          expect(await everyThreadAnswered(service.url, 2)).toBe(true);
          const answer = await call(`${service.url}/api/tasks/${task}`, {});
          poisonAnswers.push({ task, expected: code, answer });
        }
      }
      stop();
      const goodCounts = await good;
      const poisonCounts = tally(poisonAnswers.map(({ answer }) => answer));
      console.log(describeCounts('poison mix, good requests', goodCounts));
      console.log(describeCounts('poison mix, poison requests', poisonCounts));

      expect(goodCounts.failed).toEqual({});
      expect(goodCounts.succeeded).toBe(goodCounts.sent);
      expect(goodCounts.sent).toBeGreaterThan(0);
      expect(poisonAnswers.map(({ task, answer }) => `${task}:${answer.outcome}`)).toEqual(
        poisonAnswers.map(({ task, expected }) => `${task}:${expected}`),
      );
      // crash ×2, oom ×2 and spin ×1 each cost a thread; a restart is counted
      // once its replacement is up, so wait for both.
      const full = await waitFor(
        () =>
          pool.stats().threads === pool.stats().targetThreads && pool.stats().threadRestarts >= 5,
        20_000,
      );
      console.log(`pool after the poison: ${JSON.stringify(pick(pool.stats()))}`);
      expect(full).toBe(true);
      expect(pool.stats().threadRestarts).toBeGreaterThanOrEqual(5);
      await expect(
        postJson(`${service.url}/api/tasks/factorial`, { n: 5 }),
      ).resolves.toHaveProperty('status', 200);
    });
  });

  describe('a cluster process killed with kill -9', () => {
    let service: ServiceProcess;
    afterAll(() => service.stop());

    it('fails only the requests that process had in flight', async () => {
      service = await startService({
        CLUSTER_PROCESSES: '2',
        POOL_THREADS: '1',
      });
      expect(await waitFor(() => serverPids(service).length === 2, 30_000)).toBe(true);
      const [victim] = serverPids(service);
      const concurrency = 4;
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      let answered = 0;
      const load = steadyLoad({
        url: service.url,
        path: '/api/tasks/sleep',
        body: { ms: 50 },
        concurrency,
        until: stopped,
        maxPerWorker: 2_000,
        onResult: (outcome) => (answered += outcome === 'ok' ? 1 : 0),
      });
      // The load is flowing through both processes: a few answers each, on average.
      expect(await waitFor(() => answered >= 20, 30_000)).toBe(true);
      process.kill(victim!, 'SIGKILL');
      // The primary starts a replacement; the load goes on until it is serving too.
      const replaced = await waitFor(() => serverPids(service).length === 3, 30_000);
      const answeredWhenReplaced = answered;
      expect(await waitFor(() => answered >= answeredWhenReplaced + 20, 30_000)).toBe(true);
      stop();
      const counts = await load;
      console.log(describeCounts('kill -9 of one of two processes', counts));
      expect(replaced).toBe(true);
      // Only what was in flight on the killed process can fail: at most one per client.
      const { inFlight, refused, unexplainedRefusals } = killFailures(counts, service.lines);
      const labels = Object.keys(counts.failed);
      expect(labels.filter((code) => code !== 'network error' && code !== 'refused')).toEqual([]);
      expect(inFlight).toBeLessThanOrEqual(concurrency);
      expect(unexplainedRefusals).toBe(0);
      expect(counts.succeeded + inFlight + refused).toBe(counts.sent);
      expect(counts.succeeded).toBeGreaterThan(inFlight + refused);
    });
  });

  describe('SIGTERM with a full queue', () => {
    let service: ServiceProcess;
    afterAll(() => service.stop());

    it('completes every accepted request or answers it SHUTTING_DOWN; none hangs', async () => {
      service = await startService({
        CLUSTER_PROCESSES: '1',
        POOL_THREADS: '1',
        POOL_MAX_QUEUE: '8',
        SHUTDOWN_TIMEOUT_MS: '20000',
      });
      const url = `${service.url}/api/tasks/sleep`;
      // One running and eight queued: the queue is full.
      // Each long enough that all nine are in while the first runs.
      const accepted = Array.from({ length: 9 }, () => call(url, { ms: 1_000 }));
      // Every request is in before the signal: one running and the rest waiting.
      const full = await waitFor(async () => {
        const health = (await (await fetch(`${service.url}/health`)).json()) as {
          details: { pool: { queueSize: number } };
        };
        return health.details.pool.queueSize === 8;
      }, REQUEST_BOUND_MS);
      expect(full).toBe(true);
      service.child.kill('SIGTERM');
      const answers = await Promise.all(accepted);
      const counts = tally(answers);
      console.log(describeCounts('SIGTERM with a full queue', counts));
      expect(Object.keys(counts.failed).filter((code) => code !== 'SHUTTING_DOWN')).toEqual([]);
      expect(counts.succeeded).toBeGreaterThan(0);
      // It exits by itself (Nest re-raises the signal once closed, so either form counts).
      const exit = await Promise.race([
        service.exited,
        new Promise((resolve) => setTimeout(() => resolve('still running'), 25_000)),
      ]);
      expect([
        { code: 0, signal: null },
        { code: null, signal: 'SIGTERM' },
      ]).toContainEqual(exit);
    });
  });

  describe('a burst of 10x the capacity', () => {
    let service: ServiceProcess;
    afterAll(() => service.stop());

    it('answers the excess with a fast 503 POOL_SATURATED and Retry-After; the rest succeed', async () => {
      const threads = 2;
      const maxQueue = 8;
      const capacity = threads + maxQueue;
      service = await startService({
        CLUSTER_PROCESSES: '1',
        POOL_THREADS: String(threads),
        POOL_MAX_QUEUE: String(maxQueue),
      });
      const url = `${service.url}/api/tasks/sleep`;
      // Probe liveness all through the burst.
      const probeLatencies: number[] = [];
      const probeStatuses: number[] = [];
      let bursting = true;
      const probing = (async () => {
        while (bursting) {
          const started = performance.now();
          const response = await fetch(`${service.url}/health/live`, {
            signal: AbortSignal.timeout(REQUEST_BOUND_MS),
          });
          await response.arrayBuffer();
          probeLatencies.push(performance.now() - started);
          probeStatuses.push(response.status);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const started = performance.now();
      const burst = await Promise.all(
        Array.from({ length: capacity * 10 }, async () => {
          const sentAt = performance.now();
          const answer = await call(url, { ms: 200 });
          return { ...answer, ms: performance.now() - sentAt };
        }),
      );
      const burstMs = performance.now() - started;
      bursting = false;
      await probing;
      const counts = tally(burst);
      const rejected = burst.filter((answer) => answer.outcome === 'POOL_SATURATED');
      const sorted = [...probeLatencies].sort((a, b) => a - b);
      const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      console.log(describeCounts(`burst of ${capacity * 10} against capacity ${capacity}`, counts));
      console.log(
        `burst took ${Math.round(burstMs)} ms; rejections answered in max ` +
          `${Math.round(Math.max(...rejected.map((answer) => answer.ms)))} ms; /health/live ` +
          `${probeLatencies.length} probes, p50 ${p(0.5)?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`,
      );
      expect(Object.keys(counts.failed).filter((code) => code !== 'POOL_SATURATED')).toEqual([]);
      expect(counts.succeeded).toBeGreaterThanOrEqual(capacity);
      expect(rejected.length).toBeGreaterThan(0);
      for (const answer of rejected) {
        expect(answer.status).toBe(503);
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      expect(probeStatuses.length).toBeGreaterThan(0);
      expect(probeStatuses.every((status) => status === 200)).toBe(true);
    });
  });
});

function pick(stats: ReturnType<WorkerPoolService['stats']>) {
  const { threads, targetThreads, queueSize, threadRestarts, completed } = stats;
  return { threads, targetThreads, queueSize, threadRestarts, completed };
}
