import { startService, type ServiceProcess } from './support/service-process';
import { labelValues, parseMetrics, sumOf } from './support/metrics-text';

jest.setTimeout(120_000);

const TASKS = 24;

/** One scrape on a fresh connection, so the cluster hands it to the next process in turn. */
async function scrape(service: ServiceProcess, timeoutMs = 20_000) {
  const response = await fetch(`${service.url}/metrics`, {
    headers: { connection: 'close' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

/** Tries scrapes until one answers: a scrape handed to a stopped process never does. */
async function scrapeSomehow(service: ServiceProcess) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await scrape(service, 10_000);
    } catch (error) {
      if (attempt === 4) throw error;
    }
  }
}

const succeeded = (samples: ReturnType<typeof parseMetrics>) =>
  sumOf(samples, 'compute_tasks_total', { task: 'thread-id', outcome: 'success' });

/** The HTTP processes' ids: the `pid` label of the per-process metrics, minus the primary. */
const workerPids = (service: ServiceProcess, samples: ReturnType<typeof parseMetrics>) =>
  labelValues(samples, 'nodejs_heap_size_used_bytes', 'pid').filter(
    (pid) => pid !== String(service.child.pid),
  );

describe('GET /metrics under the cluster module (CLUSTER_PROCESSES=2, real processes)', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startService({
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      LOG_LEVEL: 'debug',
      // Each scrape here must see what happened just before it.
      METRICS_CACHE_MS: '0',
    });
    // Both processes listen before the test counts on them.
    for (let i = 0; i < 100 && workerPids(service, await scrape(service)).length < 2; i++) {
      await new Promise((done) => setTimeout(done, 200));
    }
  });
  afterAll(() => service.stop());

  it('counts every task of every process in one scrape, whichever process answers it', async () => {
    const first = await scrape(service);
    const before = succeeded(first);
    // A scrape while a process was still starting (in beforeAll) rightly counts it as silent.
    const failuresBefore = sumOf(first, 'compute_metrics_collection_failures_total');
    for (let i = 0; i < TASKS; i++) {
      const response = await fetch(`${service.url}/api/tasks/thread-id`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: '{}',
      });
      expect(response.status).toBe(200);
    }
    const scrapes = [];
    for (let i = 0; i < 4; i++) scrapes.push(await scrape(service));
    for (const samples of scrapes) {
      expect(succeeded(samples) - before).toBe(TASKS);
      expect(workerPids(service, samples)).toHaveLength(2);
    }
    // Counters and histograms agree: every task was timed once.
    const last = scrapes.at(-1)!;
    expect(sumOf(last, 'compute_task_run_seconds_count', { task: 'thread-id' })).toBe(
      succeeded(last),
    );
    expect(sumOf(last, 'compute_pool_threads')).toBe(2);
    expect(sumOf(last, 'compute_metrics_collection_failures_total')).toBe(failuresBefore);
  });

  it('logs each finished task at debug with its outcome, times and request id', async () => {
    const response = await fetch(`${service.url}/api/tasks/throw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'metrics-log-check-1' },
      body: '{"message":"planned"}',
    });
    expect(response.status).toBe(500);
    const line = await service.waitForLine(/"reqId":"metrics-log-check-1".*"task finished"/);
    expect(JSON.parse(line)).toMatchObject({
      level: 20,
      reqId: 'metrics-log-check-1',
      task: 'throw',
      outcome: 'failed',
      code: 'TASK_FAILED',
      waitMs: expect.any(Number),
      runMs: expect.any(Number),
      msg: 'task finished',
    });
  });

  it('answers without a stopped process, counts the failure, and keeps its totals', async () => {
    const before = await scrape(service);
    const [stopped] = workerPids(service, before);
    process.kill(Number(stopped), 'SIGSTOP');
    try {
      const during = await scrapeSomehow(service);
      expect(workerPids(service, during)).not.toContain(stopped);
      expect(sumOf(during, 'compute_metrics_collection_failures_total')).toBeGreaterThanOrEqual(1);
      // Its counts from the last time it answered are still in the totals.
      expect(succeeded(during)).toBe(succeeded(before));
    } finally {
      process.kill(Number(stopped), 'SIGCONT');
    }
    const after = await scrape(service);
    expect(workerPids(service, after)).toContain(stopped);
    expect(succeeded(after)).toBe(succeeded(before));
  });

  it('keeps the totals of a process that died, so counters never go backwards', async () => {
    const before = await scrape(service);
    const [victim] = workerPids(service, before);
    process.kill(Number(victim), 'SIGKILL');
    let after = await scrapeSomehow(service);
    for (let i = 0; i < 100; i++) {
      const pids = workerPids(service, after);
      if (pids.length === 2 && !pids.includes(victim!)) break;
      await new Promise((done) => setTimeout(done, 200));
      after = await scrapeSomehow(service);
    }
    expect(workerPids(service, after)).toHaveLength(2);
    expect(workerPids(service, after)).not.toContain(victim);
    expect(succeeded(after)).toBe(succeeded(before));
  });
});
