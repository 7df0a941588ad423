import { resolve } from 'node:path';
import { waitUntil } from './support/poll';
import { BUILT_MAIN, launchProcess } from './support/service-process';

jest.setTimeout(120_000);

const NEST_MODULE_COUNTER = resolve(__dirname, 'fixtures/nest-module-counter.js');

/**
 * prom-client is the official client (@prometheus-io/client) under the name
 * @willsoto/nestjs-prometheus requires, one copy of it: a metric that a Nest
 * module registers is in the registry corepool serves (ADR 0046).
 */
describe('/metrics and the metrics registered through the Nest module', () => {
  it.each([
    ['one process', '1', 1],
    ['cluster mode, summed over both processes', '2', 2],
  ])('serves them: %s', async (_mode, workers, count) => {
    const service = await launchProcess({
      label: `${workers} process(es)`,
      args: ['--require', NEST_MODULE_COUNTER, BUILT_MAIN],
      env: { NODE_ENV: 'production', CLUSTER_PROCESSES: workers, POOL_THREADS: '1' },
      readyPath: '/health/ready',
      // Two processes, each warming its threads, on a shared machine.
      timeoutMs: 90_000,
    });
    try {
      const counter = new RegExp(`^test_nest_module_counter_total ${count}$`, 'm');
      let metrics = '';
      // Ready means one process answers; the scrape sums those that have started, so the
      // second one's count arrives once it has (a sum that stays short times out here).
      await waitUntil(`${count} processes in the scrape`, async () => {
        metrics = await (await fetch(`${service.url}/metrics`)).text();
        return counter.test(metrics);
      });
      expect(metrics).toMatch(counter);
      // corepool's own metrics, from the same registry.
      expect(metrics).toMatch(/^# TYPE compute_tasks_total counter$/m);
    } finally {
      await service.stop();
    }
  });
});
