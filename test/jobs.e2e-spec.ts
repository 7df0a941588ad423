import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { register } from 'prom-client';
import { decryptResult, type EncryptedResult } from '../src/jobs/result-cipher';
import { startApp, type RunningApp } from './support/http-app';
import {
  getJob,
  REDIS_URL,
  submitJob,
  submitOk,
  uniquePrefix,
  waitForJob,
  type Json,
} from './support/jobs-client';
import { invoicePdf, passwordProtectedPdf } from './support/pdf-fixtures';
import { waitUntil } from './support/poll';

jest.setTimeout(120_000);

const KEY = randomBytes(32).toString('base64');

/** One series of the default registry (a histogram's `_count` too), 0 when absent. */
async function metricValue(series: string, labels: Record<string, string>): Promise<number> {
  const metric = register.getSingleMetric(series.replace(/_count$/, ''));
  const values = metric === undefined ? [] : (await metric.get()).values;
  const found = values.find(
    (value) =>
      ((value as { metricName?: string }).metricName ?? series) === series &&
      Object.entries(labels).every(([key, label]) => value.labels[key] === label),
  );
  return found?.value ?? 0;
}

const backends: Array<[string, () => Record<string, string>]> = [
  ['SQLite store', () => ({})],
  ['BullMQ on Redis', () => ({ REDIS_URL, JOBS_QUEUE_PREFIX: uniquePrefix() })],
];
// Runs a job gets when its thread crashes (JOBS_ATTEMPTS below): both backends retry.
const runs = 2;

describe.each(backends)('jobs on the %s (real server, real threads)', (_name, backendEnv) => {
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp({
      ...backendEnv(),
      POOL_THREADS: '1',
      RESULT_ENCRYPTION_KEY: KEY,
      JOBS_ATTEMPTS: '2',
      JOBS_BACKOFF_MS: '100',
    });
  });
  afterAll(() => service.close());

  it('accepts a job with 202, a Location and links, then reports its result', async () => {
    const response = await submitJob(service.url, 'factorial', { n: 20 });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as Json;
    expect(accepted).toEqual({
      id: expect.any(String),
      // The SQLite store may claim a job before the answer leaves.
      status: expect.stringMatching(/^(queued|running)$/),
      links: { self: `/api/jobs/${accepted.id}` },
    });
    expect(response.headers.get('location')).toBe(`/api/jobs/${accepted.id}`);
    const job = await waitForJob(service.url, accepted.id as string);
    expect(job).toMatchObject({
      id: accepted.id,
      task: 'factorial',
      status: 'succeeded',
      attempts: 1,
      result: {
        value: { digits: '2432902008176640000' },
        runner: { pid: process.pid, threadId: expect.any(Number) },
      },
    });
    for (const time of ['createdAt', 'startedAt', 'finishedAt']) {
      expect(Date.parse(job[time] as string)).not.toBeNaN();
    }
  });

  it('refuses a bad job at submission, with the synchronous API codes', async () => {
    const invalid = await submitJob(service.url, 'factorial', { n: -1 });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as Json).code).toBe('VALIDATION_FAILED');
    const unknown = await submitJob(service.url, 'no-such-task');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).code).toBe('TASK_NOT_FOUND');
    const missing = await fetch(`${service.url}/api/jobs/does-not-exist`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).code).toBe('JOB_NOT_FOUND');
  });

  it('stores the failure of a task that throws, with its code', async () => {
    const id = await submitOk(service.url, 'throw', { message: 'bad invoice' });
    const job = await waitForJob(service.url, id);
    expect(job).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'TASK_FAILED', status: 500, detail: 'bad invoice' },
    });
  });

  it('retries a job whose thread crashed as configured, then fails it with WORKER_CRASHED', async () => {
    const id = await submitOk(service.url, 'crash');
    const job = await waitForJob(service.url, id);
    expect(job).toMatchObject({
      status: 'failed',
      attempts: runs,
      error: { code: 'WORKER_CRASHED', status: 500 },
    });
  });

  it('counts finished jobs by task and outcome, their duration, and the queue depth', async () => {
    const succeeded = { task: 'factorial', outcome: 'succeeded' };
    const durations = { task: 'factorial' };
    const countBefore = await metricValue('compute_jobs_total', succeeded);
    const timedBefore = await metricValue('compute_job_duration_seconds_count', durations);
    const id = await submitOk(service.url, 'factorial', { n: 4 });
    await waitForJob(service.url, id);
    expect(await metricValue('compute_jobs_total', succeeded)).toBe(countBefore + 1);
    expect(await metricValue('compute_job_duration_seconds_count', durations)).toBe(
      timedBefore + 1,
    );
    expect(await metricValue('compute_jobs_queue_depth', { state: 'succeeded' })).toBeGreaterThan(
      0,
    );
  });

  it('cancels a queued job (removed) and a running one (aborted)', async () => {
    const running = await submitOk(service.url, 'spin');
    await waitForJob(service.url, running, (job) => job.status === 'running');
    const queued = await submitOk(service.url, 'factorial', { n: 5 });
    expect((await getJob(service.url, queued)).status).toBe('queued');

    const cancelQueued = await fetch(`${service.url}/api/jobs/${queued}`, { method: 'DELETE' });
    expect(cancelQueued.status).toBe(200);
    expect(((await cancelQueued.json()) as Json).status).toBe('cancelled');
    const cancelRunning = await fetch(`${service.url}/api/jobs/${running}`, { method: 'DELETE' });
    expect(cancelRunning.status).toBe(200);
    const aborted = await waitForJob(service.url, running);
    expect(aborted).toMatchObject({ status: 'cancelled', error: { code: 'TASK_CANCELLED' } });
    expect(await getJob(service.url, queued)).toMatchObject({ status: 'cancelled' });
    // The thread that spun was stopped: the pool runs the next job.
    const next = await submitOk(service.url, 'factorial', { n: 3 });
    expect((await waitForJob(service.url, next)).status).toBe('succeeded');
  });

  it('lists recent jobs by status, one page at a time', async () => {
    const ids = [
      await submitOk(service.url, 'thread-id'),
      await submitOk(service.url, 'thread-id'),
    ];
    for (const id of ids) await waitForJob(service.url, id);
    const first = (await (
      await fetch(`${service.url}/api/jobs?status=succeeded&limit=1`)
    ).json()) as Json;
    expect(first.items).toHaveLength(1);
    expect(first.items[0].status).toBe('succeeded');
    expect(first.links.next).toContain('cursor=');
    const second = (await (
      await fetch(`${service.url}${first.links.next as string}`)
    ).json()) as Json;
    expect(second.items[0].id).not.toBe(first.items[0].id);
    // failed and cancelled jobs are told apart (BullMQ keeps both in one set).
    for (const status of ['failed', 'cancelled']) {
      const page = (await (await fetch(`${service.url}/api/jobs?status=${status}`)).json()) as Json;
      expect(page.items.length).toBeGreaterThan(0);
      expect(new Set((page.items as Json[]).map((item) => item.status))).toEqual(new Set([status]));
    }
    const bad = await fetch(`${service.url}/api/jobs?status=sleeping`);
    expect(bad.status).toBe(400);
  });

  it('extracts a PDF sent as a raw body, and encrypts the result when asked', async () => {
    const pdf = await invoicePdf(['Total due: 1234.56 EUR', 'Page two']);
    const response = await fetch(`${service.url}/api/jobs?task=pdf-extract&encrypt=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: pdf,
    });
    expect(response.status).toBe(202);
    const job = await waitForJob(service.url, ((await response.json()) as Json).id as string);
    expect(job.status).toBe('succeeded');
    const encrypted = job.result.value as EncryptedResult;
    expect(encrypted.alg).toBe('A256GCM');
    expect(JSON.stringify(encrypted)).not.toContain('Invoice');
    expect(decryptResult(encrypted, KEY)).toMatchObject({
      pages: 2,
      title: 'Invoice 42',
      author: 'ACME Payments',
      creationDate: '2026-01-02T03:04:05.000Z',
      modificationDate: '2026-02-03T04:05:06.000Z',
      text: ['Total due: 1234.56 EUR', 'Page two'],
    });
  });

  it('fails an unreadable PDF job with INVALID_DOCUMENT, once', async () => {
    const response = await fetch(`${service.url}/api/jobs?task=pdf-extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: Buffer.from('%PDF-1.7\nnot really a pdf'),
    });
    const job = await waitForJob(service.url, ((await response.json()) as Json).id as string);
    expect(job).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'INVALID_DOCUMENT', status: 422 },
    });
  });
});

describe('pdf-extract on the synchronous API', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({ POOL_THREADS: '1' });
  });
  afterAll(() => service.close());

  const post = (body: Uint8Array) =>
    fetch(`${service.url}/api/tasks/pdf-extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body,
    });

  it('answers 422 DOCUMENT_ENCRYPTED for a password-protected PDF', async () => {
    const response = await post(passwordProtectedPdf());
    expect(response.status).toBe(422);
    expect(((await response.json()) as Json).code).toBe('DOCUMENT_ENCRYPTED');
  });

  it('answers 422 INVALID_DOCUMENT for bytes that are not a PDF', async () => {
    const response = await post(Buffer.from('GIF89a not a pdf'));
    expect(response.status).toBe(422);
    expect(((await response.json()) as Json).code).toBe('INVALID_DOCUMENT');
  });

  it('refuses another content type with 415', async () => {
    const response = await fetch(`${service.url}/api/tasks/pdf-extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from('%PDF-1.7'),
    });
    expect(response.status).toBe(415);
  });
});

describe('SQLite job store bounds', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({
      POOL_THREADS: '1',
      JOBS_MAX_STORED: '2',
      JOBS_MAX_BODY_BYTES: '2048',
    });
  });
  afterAll(() => service.close());

  it('answers 503 JOB_QUEUE_FULL when every kept job is still queued or running', async () => {
    const running = await submitOk(service.url, 'spin');
    const queued = await submitOk(service.url, 'thread-id');
    const refused = await submitJob(service.url, 'thread-id');
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Json).code).toBe('JOB_QUEUE_FULL');
    for (const id of [queued, running]) {
      await fetch(`${service.url}/api/jobs/${id}`, { method: 'DELETE' });
    }
    // Finished jobs make room: the oldest is dropped for a new one.
    const next = await submitOk(service.url, 'thread-id');
    expect((await waitForJob(service.url, next)).status).toBe('succeeded');
  });

  it('refuses a binary job body over JOBS_MAX_BODY_BYTES with 413', async () => {
    const response = await fetch(`${service.url}/api/jobs?task=byte-length`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(4096),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Json).code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('BullMQ job store bounds: bytes counted as Redis stores them', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({
      REDIS_URL,
      JOBS_QUEUE_PREFIX: uniquePrefix(),
      POOL_THREADS: '1',
      JOBS_MAX_STORED_BYTES: '1048576',
    });
  });
  afterAll(() => service.close());

  const submitBytes = (size: number) =>
    fetch(`${service.url}/api/jobs?task=byte-length`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(size, 1),
    });

  it('counts a binary body as its own bytes, which is what Redis holds (a value of its own)', async () => {
    // 1,100,000 bytes do not fit in 1 MiB.
    const refused = await submitBytes(1_100_000);
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as Json).code).toBe('PAYLOAD_TOO_LARGE');
    // 900,000 bytes do: as base64 in the job they would have been 1,200,000.
    const accepted = await submitBytes(900_000);
    expect(accepted.status).toBe(202);
    const job = await waitForJob(service.url, ((await accepted.json()) as Json).id as string);
    expect(job).toMatchObject({ status: 'succeeded', result: { value: { byteLength: 900_000 } } });
  });
});

/** Opens `GET /api/jobs/:id/events` from `localAddress`; resolves once its head arrives. */
function openStream(
  url: string,
  id: string,
  localAddress: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Promise<string>; close(): void }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}/api/jobs/${id}/events`,
      { agent: false, localAddress },
      (response) => {
        let text = '';
        const body = new Promise<string>((done) => {
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => done(text)).on('close', () => done(text));
        });
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body,
          close: () => outgoing.destroy(),
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('event streams: capped per client and in all', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({
      POOL_THREADS: '1',
      JOBS_EVENTS_MAX_STREAMS_PER_CLIENT: '2',
      JOBS_EVENTS_MAX_STREAMS: '3',
    });
  });
  afterAll(() => service.close());

  it('gives the place of a refused stream back: 404s never add up to a 429', async () => {
    for (let i = 0; i < 4; i++) {
      const missing = await openStream(service.url, 'no-such-job', '127.0.0.4');
      expect(missing.status).toBe(404);
    }
  });

  it('refuses a client past its streams with 429, everyone past the total, and frees them on close', async () => {
    // A job that runs until it is cancelled keeps its streams open.
    const id = await submitOk(service.url, 'spin');
    const held = [
      await openStream(service.url, id, '127.0.0.1'),
      await openStream(service.url, id, '127.0.0.1'),
    ];
    expect(held.map((stream) => stream.status)).toEqual([200, 200]);

    const third = await openStream(service.url, id, '127.0.0.1');
    expect(third.status).toBe(429);
    expect(third.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(third.headers['retry-after']).toBe('5');
    expect(JSON.parse(await third.body)).toMatchObject({
      code: 'RATE_LIMITED',
      detail: expect.stringContaining('2 event streams open per client') as unknown,
    });

    const other = await openStream(service.url, id, '127.0.0.2');
    expect(other.status).toBe(200);
    const overTotal = await openStream(service.url, id, '127.0.0.3');
    expect(overTotal.status).toBe(429);
    expect(JSON.parse(await overTotal.body)).toMatchObject({
      code: 'RATE_LIMITED',
      detail: expect.stringContaining('holds 3 event streams at most') as unknown,
    });

    held[0]!.close();
    await waitUntil(
      'a closed stream to give its place back',
      async () => {
        const next = await openStream(service.url, id, '127.0.0.1');
        if (next.status === 200) held.push(next);
        return next.status === 200;
      },
      { timeoutMs: 10_000 },
    );
    await fetch(`${service.url}/api/jobs/${id}`, { method: 'DELETE' });
    for (const stream of [...held, other]) stream.close();
  });
});
