import { parseMetrics, sumOf } from './support/metrics-text';
import { postJson, startApp, type RunningApp } from './support/http-app';

jest.setTimeout(60_000);

async function scrape(service: RunningApp) {
  const response = await fetch(`${service.url}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseMetrics(text) };
}

describe('GET /metrics in one process (real server, real threads)', () => {
  let service: RunningApp;

  afterEach(() => service?.close());

  it('times requests by route template, never by raw URL, and counts errors by code', async () => {
    // Each scrape here must see what happened just before it.
    service = await startApp({ POOL_THREADS: '1', METRICS_CACHE_MS: '0' });
    for (const n of [5, 6, 7]) {
      expect((await postJson(`${service.url}/api/tasks/factorial`, { n })).status).toBe(200);
    }
    expect((await postJson(`${service.url}/api/tasks/no-such-task-xqzv`, {})).status).toBe(404);
    expect((await fetch(`${service.url}/no/such/route/xqzv`)).status).toBe(404);

    const { text, samples } = await scrape(service);
    // Letters, not digits: a sample's value (0.0049698904711…) may hold any run of digits.
    expect(text).not.toContain('xqzv');
    const tasksRoute = { method: 'POST', route: '/api/tasks/:name' };
    expect(
      sumOf(samples, 'http_request_duration_seconds_count', { ...tasksRoute, status_code: '200' }),
    ).toBe(3);
    expect(
      sumOf(samples, 'http_errors_total', {
        ...tasksRoute,
        status_code: '404',
        code: 'TASK_NOT_FOUND',
      }),
    ).toBe(1);
    expect(
      sumOf(samples, 'http_errors_total', {
        method: 'GET',
        route: 'unmatched',
        status_code: '404',
        code: 'ROUTE_NOT_FOUND',
      }),
    ).toBe(1);
    expect(sumOf(samples, 'compute_tasks_total', { task: 'factorial', outcome: 'success' })).toBe(
      3,
    );
    expect(sumOf(samples, 'compute_task_run_seconds_count', { task: 'factorial' })).toBe(3);
    expect(sumOf(samples, 'compute_task_wait_seconds_count', { task: 'factorial' })).toBe(3);
    // Outcomes that never happened are there, at zero.
    expect(
      samples.filter(
        (sample) => sample.name === 'compute_tasks_total' && sample.labels.task === 'factorial',
      ),
    ).toHaveLength(6);
    // No primary: this process's own registry, default metrics included, labelled with its pid.
    expect(
      sumOf(samples, 'nodejs_heap_size_used_bytes', { pid: String(process.pid) }),
    ).toBeGreaterThan(0);
  });

  it('reports the pool of the application that serves it, with restarts and every outcome', async () => {
    service = await startApp({ POOL_THREADS: '2', TASK_TIMEOUT_MS: '1000', METRICS_CACHE_MS: '0' });
    expect((await postJson(`${service.url}/api/tasks/crash`, {})).status).toBe(500);
    expect((await postJson(`${service.url}/api/tasks/throw`, {})).status).toBe(500);
    expect((await postJson(`${service.url}/api/tasks/spin`, {})).status).toBe(504);

    // Piscina replaces dead threads in the background; a restart counts once its replacement is up.
    let samples = (await scrape(service)).samples;
    const replaced = () =>
      sumOf(samples, 'compute_pool_threads') === 2 &&
      sumOf(samples, 'compute_pool_thread_restarts_total') === 2;
    for (let i = 0; i < 100 && !replaced(); i++) {
      await new Promise((done) => setTimeout(done, 100));
      samples = (await scrape(service)).samples;
    }
    // This application's pool, not one an earlier application in this process left behind.
    expect(sumOf(samples, 'compute_pool_threads')).toBe(2);
    expect(sumOf(samples, 'compute_pool_queue_size')).toBe(0);
    expect(sumOf(samples, 'compute_pool_utilization')).toBe(0);
    expect(sumOf(samples, 'compute_pool_thread_restarts_total')).toBe(2);
    expect(sumOf(samples, 'compute_tasks_total', { task: 'crash', outcome: 'crashed' })).toBe(1);
    expect(sumOf(samples, 'compute_tasks_total', { task: 'throw', outcome: 'failed' })).toBe(1);
    expect(sumOf(samples, 'compute_tasks_total', { task: 'spin', outcome: 'timeout' })).toBe(1);
    // The last bucket is the task timeout.
    expect(
      samples.some(
        (sample) => sample.name === 'compute_task_run_seconds_bucket' && sample.labels.le === '1',
      ),
    ).toBe(true);
  });
});
