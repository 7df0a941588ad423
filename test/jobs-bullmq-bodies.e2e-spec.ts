import { createHash, randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { JOBS_QUEUE } from '../src/jobs/bull-jobs.constants';
import { startService, type ServiceProcess } from './support/service-process';
import { REDIS_URL, uniquePrefix, waitForJob, type Json } from './support/jobs-client';
import { waitUntil } from './support/poll';

jest.setTimeout(180_000);

const MiB = 1024 * 1024;

/** A binary job: the raw body, the task in the query string. */
async function submitBinary(url: string, body: Buffer): Promise<Response> {
  return fetch(`${url}/api/jobs?task=hash`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body,
  });
}

/**
 * Big binary bodies on the BullMQ backend (a real process, real Redis): the
 * body is a Redis value of its own, written and read as bytes, never JSON
 * or base64 in the job (docs/adr/0053-a-bullmq-jobs-body-is-a-redis-value-of-its-own.md).
 */
describe('BullMQ jobs with 16 MiB binary bodies (real process, real Redis)', () => {
  const prefix = uniquePrefix();
  const redis = new Redis(REDIS_URL);
  let service: ServiceProcess;
  const jobKey = (id: string) => `${prefix}:${JOBS_QUEUE}:${id}`;
  const storedBytes = async () =>
    Number((await redis.get(`${prefix}:${JOBS_QUEUE}:stored-bytes`)) ?? 0);
  const bodyKeys = () => redis.keys(`${prefix}:${JOBS_QUEUE}:body:*`);
  /** A job that holds the one thread, so that the next ones wait in Redis. */
  const busy = async (ms = 1500) => {
    const response = await fetch(`${service.url}/api/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'sleep', input: { ms } }),
    });
    const id = ((await response.json()) as Json).id as string;
    await waitForJob(service.url, id, (job) => job.status === 'running');
    return id;
  };

  beforeAll(async () => {
    service = await startService({
      REDIS_URL,
      JOBS_QUEUE_PREFIX: prefix,
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      JOBS_ATTEMPTS: '1',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    await service?.stop();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('round-trips 16 MiB bodies byte-exact; a waiting job holds its body as bytes of its own, not in its JSON', async () => {
    // Long enough for both submissions and the checks below on a busy machine.
    const first = await busy(8000);
    const bodies = [randomBytes(16 * MiB), randomBytes(16 * MiB)];
    const ids = await Promise.all(
      bodies.map(async (body) => {
        const response = await submitBinary(service.url, body);
        expect(response.status).toBe(202);
        return ((await response.json()) as Json).id as string;
      }),
    );
    // While they wait: the job's data is a few hundred bytes of JSON naming the body's key,
    // and that key holds exactly the bytes sent.
    for (const [index, id] of ids.entries()) {
      const data = (await redis.hget(jobKey(id), 'data')) as string;
      expect(data.length).toBeLessThan(1024);
      const { bodyKey, body } = JSON.parse(data) as { bodyKey: string; body?: string };
      expect(body).toBeUndefined();
      expect((await redis.getBuffer(bodyKey))?.equals(bodies[index]!)).toBe(true);
    }
    // Counted as stored: the bodies' own bytes (not base64's 4/3), with the small inputs.
    const held = await storedBytes();
    expect(held).toBeGreaterThanOrEqual(32 * MiB);
    expect(held).toBeLessThan(32 * MiB + 1024);

    const jobs = await Promise.all(ids.map((id) => waitForJob(service.url, id)));
    expect(jobs.map((job) => job.status)).toEqual(['succeeded', 'succeeded']);
    expect(jobs.map((job) => (job.result as Json).value.digest)).toEqual(
      bodies.map((body) => createHash('sha256').update(body).digest('hex')),
    );
    await waitForJob(service.url, first);
    // Every job ended: no body left in Redis, no byte left counted.
    await waitUntil('the bodies and their bytes to be given back', async () => {
      return (await bodyKeys()).length === 0 && (await storedBytes()) === 0;
    });
  });

  it('gives back the body of a job cancelled while it waits', async () => {
    const first = await busy();
    const response = await submitBinary(service.url, randomBytes(MiB));
    const id = ((await response.json()) as Json).id as string;
    expect(await bodyKeys()).toHaveLength(1);
    const cancelled = await fetch(`${service.url}/api/jobs/${id}`, { method: 'DELETE' });
    expect(((await cancelled.json()) as Json).status).toBe('cancelled');
    expect(await bodyKeys()).toEqual([]);
    await waitForJob(service.url, first);
    await waitUntil('the bytes to be given back', async () => (await storedBytes()) === 0);
  });

  it('fails with TASK_FAILED a job whose body Redis no longer holds', async () => {
    const first = await busy();
    const response = await submitBinary(service.url, randomBytes(MiB));
    const id = ((await response.json()) as Json).id as string;
    const [key] = await bodyKeys();
    await redis.del(key!);
    const job = await waitForJob(service.url, id);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'TASK_FAILED' } });
    expect(job.error.detail).toContain('no longer in Redis');
    await waitForJob(service.url, first);
  });
});
