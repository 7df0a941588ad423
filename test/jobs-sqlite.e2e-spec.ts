import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshJobsPath, startService, type ServiceProcess } from './support/service-process';
import {
  getJob,
  getOnNewConnection,
  readEvents,
  REDIS_URL,
  submitOk,
  uniquePrefix,
  waitForJob,
  type Json,
} from './support/jobs-client';
import { JOBS_QUEUE } from '../src/jobs/bull-jobs.constants';
import { waitUntil } from './support/poll';

jest.setTimeout(180_000);

/** A job backend's settings, and whether a job is held where that backend keeps jobs. */
interface Backend {
  readonly env: Record<string, string>;
  stored(id: string): Promise<boolean>;
}

function sqliteBackend(): Backend {
  const path = freshJobsPath();
  return {
    env: { JOBS_SQLITE_PATH: path },
    stored: (id) => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return Promise.resolve(db.prepare('SELECT 1 FROM jobs WHERE id = ?').get(id) !== undefined);
      } finally {
        db.close();
      }
    },
  };
}

function bullBackend(): Backend {
  const prefix = uniquePrefix();
  return {
    env: { REDIS_URL, JOBS_QUEUE_PREFIX: prefix },
    stored: async (id) => {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        return (await redis.exists(`${prefix}:${JOBS_QUEUE}:${id}`)) === 1;
      } finally {
        redis.disconnect();
      }
    },
  };
}

// The job routes over HTTP on the built service, two cluster processes, on each backend:
// the default (SQLite, one job file) and BullMQ on the shared Redis (a key prefix of its own).
const backends: Array<[string, () => Backend]> = [
  ['the default configuration (SQLite)', sqliteBackend],
  ['BullMQ on Redis', bullBackend],
];

describe.each(backends)('jobs on %s, every cluster process', (_name, makeBackend) => {
  const backend = makeBackend();
  let service: ServiceProcess;

  beforeAll(async () => {
    // The default: as many processes as cores (at least 2 here).
    service = await startService({
      ...backend.env,
      CLUSTER_PROCESSES: '2',
      JOBS_ATTEMPTS: '2',
      JOBS_BACKOFF_MS: '100',
    });
  });
  afterAll(() => service.stop());

  it("answers the README's job example from every process, every time", async () => {
    for (let i = 0; i < 20; i++) {
      const id = await submitOk(service.url, 'factorial', { n: 5000 });
      // A new connection each time, so the kernel spreads them over both processes.
      const { status, body } = await getOnNewConnection(`${service.url}/api/jobs/${id}`);
      expect([i, status]).toEqual([i, 200]);
      expect(body.id).toBe(id);
      expect((await waitForJob(service.url, id)).status).toBe('succeeded');
      // Held by the backend under test, not by another one the settings were lost for.
      expect([i, await backend.stored(id)]).toEqual([i, true]);
    }
  });

  it('makes one job of 50 concurrent submissions with one Idempotency-Key', async () => {
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${service.url}/api/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ task: 'factorial', input: { n: 30 } }),
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as Json,
        })),
      ),
    );
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(49);
    const other = await fetch(`${service.url}/api/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ task: 'factorial', input: { n: 31 } }),
    });
    expect(other.status).toBe(422);
    expect(((await other.json()) as Json).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('streams every status change in order as Server-Sent Events, and resumes after Last-Event-ID', async () => {
    // A thread crash is retried once (JOBS_ATTEMPTS=2), then final.
    const id = await submitOk(service.url, 'crash');
    const events = await readEvents(service.url, id);
    const statuses = events
      .filter((event) => event.event === 'status')
      .map((event) => event.data.status);
    expect(statuses).toEqual(['queued', 'running', 'queued', 'running', 'failed']);
    const ids = events.map((event) => event.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const resumed = await readEvents(service.url, id, ids[2]);
    expect(resumed.map((event) => event.id)).toEqual(ids.slice(3));
  });

  it('streams progress while a job runs, and shows it on the job', async () => {
    const id = await submitOk(service.url, 'compute', { iterations: 8_000_000, payloadSize: 10 });
    const events = await readEvents(service.url, id);
    expect(events.some((event) => event.event === 'progress')).toBe(true);
    expect(events.at(-1)?.data.status).toBe('succeeded');
    expect((await waitForJob(service.url, id)).progress).toMatchObject({ fraction: 1 });
  });

  it('goes on with the job when the client closes its event stream', async () => {
    const id = await submitOk(service.url, 'sleep', { ms: 1000 });
    const controller = new AbortController();
    const response = await fetch(`${service.url}/api/jobs/${id}/events`, {
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    expect((await waitForJob(service.url, id)).status).toBe('succeeded');
  });

  it('refuses ?offset= with 400 OFFSET_NOT_SUPPORTED', async () => {
    const response = await fetch(`${service.url}/api/jobs?offset=10000`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).code).toBe('OFFSET_NOT_SUPPORTED');
  });
});

describe('SQLite jobs across processes and restarts (one file, real processes)', () => {
  const path = freshJobsPath();
  const env = {
    JOBS_SQLITE_PATH: path,
    CLUSTER_PROCESSES: '1',
    POOL_THREADS: '1',
    // Short leases, so that a killed process's job is taken over within seconds.
    JOBS_LOCK_DURATION_MS: '2000',
    JOBS_POLL_INTERVAL_MS: '100',
    LOG_LEVEL: 'warn',
  };
  const services: ServiceProcess[] = [];
  const start = async () => {
    const service = await startService(env);
    services.push(service);
    return service;
  };
  afterAll(() => Promise.all(services.map((service) => service.stop())));

  it('a job whose process is killed (kill -9) mid-run finishes on another', async () => {
    // Only `a` runs when the job is submitted, so the job is certainly on it.
    const a = await start();
    const id = await submitOk(a.url, 'which-process', { ms: 4000 });
    await waitForJob(a.url, id, (job) => job.status === 'running');
    a.child.kill('SIGKILL');
    await a.exited;
    const b = await start();
    const job = await waitForJob(b.url, id, undefined, 90_000);
    expect(job).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((job.result as Json).value.pid).toBe(b.child.pid);
    const statuses = (await readEvents(b.url, id))
      .filter((event) => event.event === 'status')
      .map(({ data }) => [data.status, data.attempt]);
    expect(statuses).toEqual([
      ['queued', undefined],
      ['running', 1],
      ['running', 2],
      ['succeeded', 2],
    ]);
  });

  it('keeps finished and queued jobs across a restart', async () => {
    const first = services.at(-1) as ServiceProcess;
    const done = await submitOk(first.url, 'factorial', { n: 20 });
    await waitForJob(first.url, done);
    // One thread, busy: the second job is still queued when the service stops.
    const busy = await submitOk(first.url, 'sleep', { ms: 1500 });
    const queued = await submitOk(first.url, 'factorial', { n: 21 });
    await first.shutdown();
    expect((await first.exited).code).toBe(0);
    const second = await start();
    expect(await waitForJob(second.url, done)).toMatchObject({
      status: 'succeeded',
      result: { value: { digits: '2432902008176640000' } },
    });
    expect((await waitForJob(second.url, busy)).status).toBe('succeeded');
    expect((await waitForJob(second.url, queued)).status).toBe('succeeded');
  });

  it('cancels a job running on another process', async () => {
    // Only `a` runs when the job is submitted; the cancel goes to `b`, started after.
    const a = services.at(-1) as ServiceProcess;
    const id = await submitOk(a.url, 'spin');
    await waitForJob(a.url, id, (job) => job.status === 'running');
    const b = await start();
    const cancelled = await fetch(`${b.url}/api/jobs/${id}`, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect(await waitForJob(a.url, id)).toMatchObject({
      status: 'cancelled',
      error: { code: 'TASK_CANCELLED' },
    });
    // The spinning thread was stopped: `a` runs the next job.
    const next = await submitOk(a.url, 'factorial', { n: 3 });
    expect((await waitForJob(a.url, next)).status).toBe('succeeded');
  });

  it('takes a submission that finds the write lock held by another process, once it is free', async () => {
    const service = services.at(-1) as ServiceProcess;
    const other = new DatabaseSync(path);
    let settled = false;
    let answered: Promise<{ status: number; body: Json }>;
    try {
      other.exec('BEGIN IMMEDIATE');
      answered = fetch(`${service.url}/api/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'factorial', input: { n: 7 } }),
      }).then(async (response) => {
        settled = true;
        return { status: response.status, body: (await response.json()) as Json };
      });
      await sleep(500);
      // Its writer thread waits for the lock, asleep: the event loop meanwhile answers the rest.
      expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
      // Not answered while the lock is held: the answer comes after the release below.
      expect(settled).toBe(false);
    } finally {
      other.close();
    }
    const answer = await answered;
    expect(answer.status).toBe(202);
    expect((await waitForJob(service.url, answer.body.id)).status).toBe('succeeded');
  });
});

describe('the periodic purge of finished SQLite jobs (JOBS_RESULT_TTL_SECONDS, JOBS_PURGE_INTERVAL_MS)', () => {
  const path = freshJobsPath();
  let service: ServiceProcess;

  beforeAll(async () => {
    // Finished jobs are kept one second; the purge runs every second.
    service = await startService({
      JOBS_SQLITE_PATH: path,
      CLUSTER_PROCESSES: '1',
      // Jobs may take both threads: one spins, the other runs the rest.
      POOL_THREADS: '2',
      JOBS_MAX_THREADS: '2',
      JOBS_RESULT_TTL_SECONDS: '1',
      JOBS_PURGE_INTERVAL_MS: '1000',
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(() => service.stop());

  /** Rows of these jobs, and of their events, in the file itself (reads hide expired jobs anyway). */
  const rows = (ids: readonly string[]) => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const marks = ids.map(() => '?').join(', ');
      const count = (sql: string) => Number((db.prepare(sql).get(...ids) as { n: number }).n);
      return {
        jobs: count(`SELECT count(*) AS n FROM jobs WHERE id IN (${marks})`),
        events: count(`SELECT count(*) AS n FROM job_events WHERE job_id IN (${marks})`),
      };
    } finally {
      db.close();
    }
  };

  it('deletes finished jobs and their events from the file after their retention, and keeps a running one', async () => {
    // Runs until cancelled: it has no end, so no retention, while the others are purged.
    const running = await submitOk(service.url, 'cooperative-spin');
    await waitForJob(service.url, running, (job) => job.status === 'running');
    const finished = [
      await submitOk(service.url, 'factorial', { n: 10 }),
      await submitOk(service.url, 'throw', { message: 'kept a second' }),
    ];
    // Stored, with their events, at first.
    expect(rows(finished).jobs).toBe(2);
    for (const id of finished) await waitForJob(service.url, id);
    expect(rows(finished).events).toBeGreaterThan(0);

    await waitUntil('the purge to delete the finished jobs', () => {
      const left = rows(finished);
      return left.jobs === 0 && left.events === 0;
    });
    // The running job is untouched: its row and events are there, and it still runs.
    expect(rows([running]).jobs).toBe(1);
    expect(rows([running]).events).toBeGreaterThan(0);
    expect((await getJob(service.url, running)).status).toBe('running');
    const cancelled = await fetch(`${service.url}/api/jobs/${running}`, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect((await waitForJob(service.url, running)).status).toBe('cancelled');
  });
});
