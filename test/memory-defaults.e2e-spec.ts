import { loadConfig } from '../src/config/load-config';
import { HEAP_CEILING_MB } from '../src/config/memory-limits';
import { parseMetrics, sumOf } from './support/metrics-text';
import { waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';

// The memory defaults on the built service, with no memory setting of its own: a task
// that allocates without bound fails with its code and the pool is whole again.

jest.setTimeout(120_000);

let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
});

describe('memory defaults (real processes)', () => {
  it('fails a task that allocates without bound with 500 WORKER_OUT_OF_MEMORY at the derived heap cap, and the pool returns to its size', async () => {
    const env = {
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '2',
      LOG_LEVEL: 'warn',
      METRICS_CACHE_MS: '0',
    };
    const heapCapMb = loadConfig(env).pool.maxOldGenerationMb;
    expect(heapCapMb).toBeLessThanOrEqual(HEAP_CEILING_MB);
    const running = await startService(env);
    service = running;

    const response = await fetch(`${running.url}/api/tasks/oom`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(500);
    const problem = (await response.json()) as { code: string; detail: string };
    expect(problem.code).toBe('WORKER_OUT_OF_MEMORY');
    expect(problem.detail).toContain(`heap of ${heapCapMb} MB`);

    const metrics = async () => parseMetrics(await (await fetch(`${running.url}/metrics`)).text());
    await waitUntil('the pool to be back at 2 threads', async () => {
      const now = await metrics();
      return (
        sumOf(now, 'compute_pool_threads') === 2 &&
        sumOf(now, 'compute_pool_threads_replaced_total', { cause: 'out_of_memory' }) === 1
      );
    });
    const after = await Promise.all(
      [1, 2].map(() =>
        fetch(`${running.url}/api/tasks/factorial`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"n": 50}',
        }),
      ),
    );
    expect(after.map((answer) => answer.status)).toEqual([200, 200]);
  });
});
