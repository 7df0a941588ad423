import { submitOk, waitForJob } from './support/jobs-client';
import { waitUntil } from './support/poll';
import { startService } from './support/service-process';

jest.setTimeout(120_000);

/**
 * The service end to end, once, on whichever Node.js runs jest: CI runs the
 * whole suite on the recommended LTS line and this file again on the other
 * one (.ci/run, docs/operations.md "Node.js versions").
 */
describe(`the service on Node.js ${process.versions.node}`, () => {
  it('serves a task, a job on SQLite, the probes and /metrics in cluster mode, and drains on SIGTERM with exit 0', async () => {
    const service = await startService(
      { CLUSTER_PROCESSES: '2', POOL_THREADS: '1' },
      { readyPath: '/health/ready' },
    );
    try {
      await waitUntil(
        'two ready processes',
        () => service.lines.filter((line) => /"msg":"process \d+ ready"/.test(line)).length >= 2,
      );
      const task = await fetch(`${service.url}/api/tasks/factorial`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: 20 }),
      });
      expect(task.status).toBe(200);
      expect(await task.json()).toMatchObject({ result: { digits: '2432902008176640000' } });

      const id = await submitOk(service.url, 'factorial', { n: 20 });
      expect(await waitForJob(service.url, id)).toMatchObject({ status: 'succeeded' });

      for (const probe of ['/health/live', '/health/ready']) {
        expect((await fetch(`${service.url}${probe}`)).status).toBe(200);
      }
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(metrics).toMatch(/^compute_jobs_total\{task="factorial",outcome="succeeded"\} 1$/m);
      expect(metrics).toMatch(/^nodejs_version_info\{.*version="v/m);

      process.kill(service.pid, 'SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
    } finally {
      await service.stop();
    }
  });
});
