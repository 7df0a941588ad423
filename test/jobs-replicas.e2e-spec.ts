import { freePort, startService, type ServiceProcess } from './support/service-process';
import {
  readEvents,
  submitJob,
  submitOk,
  uniquePrefix,
  waitForJob,
  type Json,
} from './support/jobs-client';
import { OwnRedis } from './support/redis-server';

jest.setTimeout(180_000);

/**
 * Real corepool processes (dist/main.js) sharing a Redis of this test's own,
 * so that it can be stopped and started again.
 */
describe('BullMQ jobs across replicas (real processes, real Redis)', () => {
  let redis: OwnRedis;
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;

  const replica = async () => {
    const service = await startService(env);
    services.push(service);
    return service;
  };

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    env = {
      REDIS_URL: redis.url,
      JOBS_QUEUE_PREFIX: uniquePrefix(),
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      // Short locks, so that a killed replica's job is taken over within seconds.
      JOBS_LOCK_DURATION_MS: '2000',
      JOBS_BACKOFF_MS: '200',
      LOG_LEVEL: 'warn',
    };
  });

  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await redis.dispose();
  });

  it('two replicas share a batch: both run jobs, whichever took the submission', async () => {
    const [a, b] = [await replica(), await replica()];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await submitOk(a.url, 'sleep', { ms: 300 }));
    const jobs = await Promise.all(ids.map((id) => waitForJob(b.url, id)));
    expect(jobs.map((job) => job.status)).toEqual(Array(8).fill('succeeded'));
    const pids = new Set(jobs.map((job) => (job.result as Json).runner.pid as number));
    expect(pids).toEqual(new Set([a.child.pid, b.child.pid]));
  });

  it('a job whose replica is killed (kill -9) mid-run finishes on another', async () => {
    // Only `a` runs now, so the job is certainly on it when it is killed. The
    // other replica starts after the kill: on this shared machine a start can
    // take longer than the job, which `a` would then finish by itself.
    const [a, b] = services;
    await b!.stop();
    const id = await submitOk(a!.url, 'sleep', { ms: 4000 });
    await waitForJob(a!.url, id, (job) => job.status === 'running');
    a!.child.kill('SIGKILL');
    await a!.exited;
    const c = await replica();
    const job = await waitForJob(c.url, id, undefined, 90_000);
    expect(job).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((job.result as Json).runner.pid).toBe(c.child.pid);
    // The takeover is the second run, in the events as in the view (and as on SQLite).
    const statuses = (await readEvents(c.url, id))
      .filter((event) => event.event === 'status')
      .map(({ data }) => [data.status, data.attempt]);
    expect(statuses).toEqual([
      ['queued', undefined],
      ['running', 1],
      ['running', 2],
      ['succeeded', 2],
    ]);
  });

  it('answers 503 QUEUE_UNAVAILABLE while Redis is down, and recovers by itself', async () => {
    const service = services[services.length - 1]!;
    await redis.stop();
    // ioredis sees the connection close within moments; until then a submission may still pass.
    let response: Response | undefined;
    for (let i = 0; i < 50; i++) {
      response = await submitJob(service.url, 'factorial', { n: 5 });
      if (response.status === 503) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(response?.status).toBe(503);
    expect(((await response!.json()) as Json).code).toBe('QUEUE_UNAVAILABLE');
    const status = await fetch(`${service.url}/api/jobs/anything`);
    expect(status.status).toBe(503);
    expect(((await status.json()) as Json).code).toBe('QUEUE_UNAVAILABLE');

    await redis.start();
    let id: string | undefined;
    for (let i = 0; i < 150 && id === undefined; i++) {
      const retry = await submitJob(service.url, 'factorial', { n: 5 });
      if (retry.status === 202) id = ((await retry.json()) as Json).id as string;
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(id).toBeDefined();
    expect(await waitForJob(service.url, id!)).toMatchObject({ status: 'succeeded' });
  });

  it('with Redis down: job calls fail at once, metrics and probes answer, a reload completes, SIGTERM exits', async () => {
    const cluster = await startService({ ...env, CLUSTER_PROCESSES: '2', LOG_LEVEL: 'info' });
    services.push(cluster);
    await redis.stop();
    let response: Response | undefined;
    for (let i = 0; i < 50 && response?.status !== 503; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      response = await submitJob(cluster.url, 'factorial', { n: 5 });
    }
    const startedAt = performance.now();
    const refused = await submitJob(cluster.url, 'factorial', { n: 5 });
    const refusedMs = performance.now() - startedAt;
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Json).code).toBe('QUEUE_UNAVAILABLE');
    console.log(`submission with Redis down answered 503 in ${refusedMs.toFixed(1)} ms`);
    for (const path of ['/metrics', '/health/live', '/health/ready']) {
      expect([path, (await fetch(`${cluster.url}${path}`)).status]).toEqual([path, 200]);
    }
    cluster.child.kill('SIGHUP');
    await cluster.waitForLine(/reload complete: 2 of 2/, 90_000);
    cluster.child.kill('SIGTERM');
    expect((await cluster.exited).code).toBe(0);
    await redis.start();
  });
});
