import { describeCounts, steadyLoad } from './support/load';
import { trigger, waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';
import { parseMetrics, sumOf } from './support/metrics-text';
import { inflationBombPdf, invoicePdf } from './support/pdf-fixtures';

// Threads over real HTTP on the built service: a client that leaves costs no thread when
// its task checks its cancellation; decompression bombs and tasks over their memory
// budget fail alone, and the process's memory stays bounded.

jest.setTimeout(120_000);

/** Per thread: heap and buffers. Small, so that a runaway task meets it quickly. */
const MEMORY_BUDGET_MB = 256;

let service: ServiceProcess;

beforeAll(async () => {
  service = await startService({
    CLUSTER_PROCESSES: '1',
    POOL_THREADS: '2',
    WORKER_MAX_MEMORY_MB: String(MEMORY_BUDGET_MB),
    CANCEL_GRACE_MS: '5000',
    LOG_LEVEL: 'warn',
    // The test reads counters right after the events that move them.
    METRICS_CACHE_MS: '0',
  });
});

afterAll(async () => {
  await service?.stop();
});

async function metrics() {
  return parseMetrics(await (await fetch(`${service.url}/metrics`)).text());
}

const post = (path: string, body: string | Uint8Array, contentType: string, signal?: AbortSignal) =>
  fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
    signal,
  });

/** The process's peak resident memory (MiB) while `work` runs, sampled every 10 ms. */
async function peakRssDuring<T>(work: Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peakMiB = service.rssMiB();
  const timer = setInterval(() => (peakMiB = Math.max(peakMiB, service.rssMiB())), 10);
  try {
    return { result: await work, peakMiB };
  } finally {
    clearInterval(timer);
  }
}

async function codeOf(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

describe('threads, over HTTP', () => {
  it('keeps the thread of a cooperative task whose client leaves', async () => {
    const before = await metrics();
    const client = new AbortController();
    const leaving = post('/api/tasks/cooperative-spin', '{}', 'application/json', client.signal);
    // On its thread, so that leaving stops a running task, not a queued one.
    await waitUntil(
      'the task to run',
      async () => sumOf(await metrics(), 'compute_pool_utilization') > 0,
    );
    client.abort();
    await expect(leaving).rejects.toThrow();
    // The task notices within a check of its flag; the counters follow at the next scrape.
    let after = before;
    await waitUntil('the task to stop', async () => {
      after = await metrics();
      return (
        sumOf(after, 'compute_tasks_stopped_total') > sumOf(before, 'compute_tasks_stopped_total')
      );
    });
    const delta = (name: string, labels: Record<string, string>) =>
      sumOf(after, name, labels) - sumOf(before, name, labels);
    expect(delta('compute_tasks_stopped_total', { how: 'cooperative' })).toBe(1);
    expect(delta('compute_tasks_stopped_total', { how: 'terminated' })).toBe(0);
    expect(delta('compute_pool_threads_replaced_total', {})).toBe(0);
    expect(delta('compute_tasks_total', { task: 'cooperative-spin', outcome: 'cancelled' })).toBe(
      1,
    );
  });

  it('refuses two 2 GiB PDF bombs at once with 422, answers valid requests beside them, and stays small', async () => {
    const bomb = inflationBombPdf(2048);
    const invoice = await invoicePdf(['Total due: 1234.56 EUR']);
    const { result, peakMiB } = await peakRssDuring(
      Promise.all([
        post('/api/tasks/pdf-extract', bomb, 'application/pdf'),
        post('/api/tasks/pdf-extract', bomb, 'application/pdf'),
        ...Array.from({ length: 4 }, () =>
          post('/api/tasks/pdf-extract', invoice, 'application/pdf'),
        ),
        ...Array.from({ length: 4 }, () =>
          post('/api/tasks/factorial', '{"n": 2000}', 'application/json'),
        ),
      ]),
    );
    const [first, second, ...valid] = result;
    expect(first.status).toBe(422);
    expect(await codeOf(first)).toBe('INVALID_DOCUMENT');
    expect(second.status).toBe(422);
    expect(valid.map((response) => response.status)).toEqual(Array(8).fill(200));
    // Two threads at the budget at most, plus the process itself: far below the 2 GiB each bomb holds.
    expect(peakMiB).toBeLessThan(2 * MEMORY_BUDGET_MB + 512);
  });

  it('stops a task whose buffers pass WORKER_MAX_MEMORY_MB with 500 WORKER_OUT_OF_MEMORY, and nothing else fails', async () => {
    const [hog, ...valid] = await Promise.all([
      post('/api/tasks/grow-buffers', '{}', 'application/json'),
      ...Array.from({ length: 6 }, () =>
        post('/api/tasks/sleep', '{"ms": 50}', 'application/json'),
      ),
    ]);
    expect(hog.status).toBe(500);
    expect(await codeOf(hog)).toBe('WORKER_OUT_OF_MEMORY');
    expect(valid.map((response) => response.status)).toEqual(Array(6).fill(200));
    expect(service.rssMiB()).toBeLessThan(2 * MEMORY_BUDGET_MB + 512);
    expect(
      sumOf(await metrics(), 'compute_pool_threads_replaced_total', { cause: 'out_of_memory' }),
    ).toBe(1);
  });
});

describe('recycling threads under load (WORKER_MAX_TASKS), over HTTP', () => {
  let recycling: ServiceProcess;

  beforeAll(async () => {
    // A thread is due after about 10 tasks (±20 %): a steady load recycles one every few seconds.
    recycling = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '2',
      WORKER_MAX_TASKS: '10',
      LOG_LEVEL: 'warn',
      METRICS_CACHE_MS: '0',
    });
  });

  afterAll(async () => {
    await recycling?.stop();
  });

  const replacedThreads = async () =>
    parseMetrics(await (await fetch(`${recycling.url}/metrics`)).text()).filter(
      (sample) => sample.name === 'compute_pool_threads_replaced_total',
    );

  it('recycles threads while requests run, and loses or fails none of them', async () => {
    const stop = trigger();
    // More requests than threads, always: every recycle happens with tasks running and waiting.
    const load = steadyLoad({
      url: recycling.url,
      path: '/api/tasks/sleep',
      body: { ms: 20 },
      concurrency: 6,
      until: stop.promise,
    });
    let recycled = 0;
    try {
      await waitUntil(
        'six threads recycled under load',
        async () =>
          (recycled = sumOf(await replacedThreads(), 'compute_pool_threads_replaced_total', {
            cause: 'recycled_tasks',
          })) >= 6,
        { timeoutMs: 90_000, intervalMs: 200 },
      );
    } finally {
      stop.fire();
    }
    const counts = await load;
    console.log(`${describeCounts('under recycling', counts)}; ${recycled} threads recycled`);
    expect(counts.failed).toEqual({});
    expect(counts.succeeded).toBe(counts.sent);
    // Six recycles of threads due after 8-12 tasks each: at least 48 tasks ran.
    expect(counts.succeeded).toBeGreaterThanOrEqual(48);
    // Every replacement was a recycle: no thread died instead.
    const causes = (await replacedThreads()).filter((sample) => sample.value > 0);
    expect(causes.map((sample) => sample.labels.cause)).toEqual(['recycled_tasks']);
  });
});
