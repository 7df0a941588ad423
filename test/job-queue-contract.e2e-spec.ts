import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { fingerprintOf } from '../src/jobs/idempotency';
import { JobQueue, type JobCaller } from '../src/jobs/job-queue';
import { isFinished, type JobPayload, type JobView } from '../src/jobs/job.types';
import { startApp, type RunningApp } from './support/http-app';
import { REDIS_URL, uniquePrefix, type Json } from './support/jobs-client';
import { codeOf } from './support/error-code';
import { waitUntil } from './support/poll';

jest.setTimeout(120_000);

/**
 * The one contract of both job backends (`src/jobs/job-queue.ts`), run
 * against each: SQLite (the default) and BullMQ on a real Redis. The queue
 * is the application's own instance, with real threads running the jobs.
 */
const backends: Array<[string, () => Record<string, string>]> = [
  ['SQLite', () => ({})],
  ['BullMQ', () => ({ REDIS_URL, JOBS_QUEUE_PREFIX: uniquePrefix() })],
];

const factorial = (n: number): JobPayload => ({ task: 'factorial', input: { n }, encrypt: false });
const owner = (id: string): JobCaller => ({ id, admin: false });
const ADMIN: JobCaller = { id: 'ops', admin: true };

/** Test-only authentication: `x-test-identity: <id>[,admin]` becomes the request's identity. */
function identityFromHeader(request: FastifyRequest, _reply: unknown, done: () => void): void {
  const header = request.headers['x-test-identity'];
  if (typeof header === 'string') {
    const [id = 'anonymous', ...scopes] = header.split(',');
    request.identity = { id, scopes: new Set(scopes), authenticated: true };
  }
  done();
}

async function finished(queue: JobQueue, id: string, caller: JobCaller): Promise<JobView> {
  for (let i = 0; i < 600; i++) {
    const job = await queue.get(id, caller);
    if (job !== undefined && isFinished(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

describe.each(backends)('the job queue contract on %s', (_name, backendEnv) => {
  let service: RunningApp;
  let queue: JobQueue;

  beforeAll(async () => {
    service = await startApp(
      { ...backendEnv(), POOL_THREADS: '2', JOBS_ATTEMPTS: '2', JOBS_BACKOFF_MS: '100' },
      (app) => app.getHttpAdapter().getInstance().addHook('onRequest', identityFromHeader),
    );
    queue = service.app.get(JobQueue);
  });
  afterAll(() => service.close());

  it("scopes every read to the job's owner; another owner gets nothing, an admin sees all", async () => {
    const alice = owner(`alice-${randomUUID()}`);
    const bob = owner(`bob-${randomUUID()}`);
    const { job } = await queue.submit({ payload: factorial(5), owner: alice.id });
    expect(job.owner).toBe(alice.id);
    await finished(queue, job.id, alice);
    expect(await queue.get(job.id, bob)).toBeUndefined();
    expect(await queue.cancel(job.id, bob)).toBeUndefined();
    expect(await queue.events(job.id, bob, 0)).toBeUndefined();
    expect((await queue.list({ limit: 10 }, bob)).items).toEqual([]);
    expect((await queue.get(job.id, ADMIN))?.status).toBe('succeeded');
    expect((await queue.list({ limit: 10 }, alice)).items.map((item) => item.id)).toEqual([job.id]);
    const all = await queue.list({ limit: 100 }, ADMIN);
    expect(all.items.map((item) => item.id)).toContain(job.id);
  });

  it('returns the original job for a retry with the same key and body; another body is refused', async () => {
    const me = owner(`retrier-${randomUUID()}`);
    const payload = factorial(7);
    const idempotency = { key: randomUUID(), fingerprint: fingerprintOf(payload) };
    const first = await queue.submit({ payload, owner: me.id, idempotency });
    const again = await queue.submit({ payload, owner: me.id, idempotency });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, job: { id: first.job.id } });
    const other = factorial(8);
    const reused = { key: idempotency.key, fingerprint: fingerprintOf(other) };
    expect(await codeOf(queue.submit({ payload: other, owner: me.id, idempotency: reused }))).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    // Keys belong to their owner: someone else's same key is their own job.
    const stranger = await queue.submit({
      payload,
      owner: `stranger-${randomUUID()}`,
      idempotency,
    });
    expect(stranger.created).toBe(true);
    expect(stranger.job.id).not.toBe(first.job.id);
  });

  it('makes one job of 50 concurrent submissions with one key', async () => {
    const me = owner(`storm-${randomUUID()}`);
    const payload = factorial(9);
    const idempotency = { key: randomUUID(), fingerprint: fingerprintOf(payload) };
    const results = await Promise.all(
      Array.from({ length: 50 }, () => queue.submit({ payload, owner: me.id, idempotency })),
    );
    expect(new Set(results.map((result) => result.job.id)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect((await queue.list({ limit: 100 }, me)).items).toHaveLength(1);
  });

  it('pages newest first with a cursor, without gaps or repeats, by status too', async () => {
    const me = owner(`pager-${randomUUID()}`);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await queue.submit({ payload: factorial(i + 1), owner: me.id })).job.id);
      // Distinct creation times, so that newest-first is one order.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    for (const id of ids) await finished(queue, id, me);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await queue.list({ limit: 3, ...(cursor === undefined ? {} : { cursor }) }, me);
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());
    expect((await queue.list({ status: 'failed', limit: 10 }, me)).items).toEqual([]);
    expect((await queue.list({ status: 'succeeded', limit: 10 }, me)).items).toHaveLength(7);
  });

  it('records every status change and the progress as events, in order, and resumes after an id', async () => {
    const me = owner(`watcher-${randomUUID()}`);
    // Long enough (a second or more) to be seen running between two polls.
    const payload: JobPayload = {
      task: 'compute',
      input: { iterations: 16_000_000, payloadSize: 10 },
      encrypt: false,
    };
    const { job } = await queue.submit({ payload, owner: me.id });
    // A running job's view carries its progress; one that finished first would not show it.
    let seen: JobView | undefined;
    await waitUntil('the job running with progress, or finished', async () => {
      seen = await queue.get(job.id, me);
      return seen !== undefined && (isFinished(seen.status) || seen.progress !== undefined);
    });
    expect(seen).toMatchObject({ status: 'running', progress: { fraction: expect.any(Number) } });
    const done = await finished(queue, job.id, me);
    expect(done.progress).toMatchObject({ fraction: 1 });
    const all = await queue.events(job.id, me, 0);
    const events = all?.events ?? [];
    const statuses = events.filter((event) => event.type === 'status').map((event) => event.status);
    expect(statuses).toEqual(['queued', 'running', 'succeeded']);
    const ids = events.map((event) => event.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.some((event) => event.type === 'progress')).toBe(true);
    const resumed = await queue.events(job.id, me, ids[1] as number);
    expect(resumed?.events.map((event) => event.id)).toEqual(ids.slice(2));
  });

  it('answers the HTTP routes only for the owner (404 JOB_NOT_FOUND otherwise), and for an admin', async () => {
    const as = (identity: string) => ({ 'x-test-identity': identity });
    const submitted = await fetch(`${service.url}/api/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('carol') },
      body: JSON.stringify({ task: 'factorial', input: { n: 6 } }),
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as Json;
    await finished(queue, id as string, ADMIN);
    for (const [method, path] of [
      ['GET', `/api/jobs/${id}`],
      ['GET', `/api/jobs/${id}/events`],
      ['DELETE', `/api/jobs/${id}`],
    ] as const) {
      const foreign = await fetch(`${service.url}${path}`, { method, headers: as('dave') });
      expect([method, path, foreign.status]).toEqual([method, path, 404]);
      expect(((await foreign.json()) as Json).code).toBe('JOB_NOT_FOUND');
      const own = await fetch(`${service.url}${path}`, { method, headers: as('carol') });
      expect([method, path, own.status]).toEqual([method, path, 200]);
      await own.text();
      const admin = await fetch(`${service.url}${path}`, { method, headers: as('erin,admin') });
      expect([method, path, admin.status]).toEqual([method, path, 200]);
      await admin.text();
    }
    const listed = (await (
      await fetch(`${service.url}/api/jobs`, { headers: as('dave') })
    ).json()) as Json;
    expect(listed.items).toEqual([]);
  });
});

describe.each(backends)('the job queue bounds on %s', (_name, backendEnv) => {
  let service: RunningApp;
  let queue: JobQueue;
  const me = owner('bounded');

  beforeAll(async () => {
    service = await startApp({
      ...backendEnv(),
      POOL_THREADS: '1',
      JOBS_MAX_STORED_BYTES: String(1024 * 1024),
      JOBS_MAX_BODY_BYTES: String(1024 * 1024),
      JOBS_MAX_RESULT_BYTES: '1024',
    });
    queue = service.app.get(JobQueue);
  });
  afterAll(() => service.close());

  it('refuses a job whose bytes would pass JOBS_MAX_STORED_BYTES while others wait', async () => {
    const busy = await queue.submit({
      payload: { task: 'sleep', input: { ms: 3000 }, encrypt: false },
      owner: me.id,
    });
    const body = (): JobPayload => ({
      task: 'byte-length',
      input: {},
      body: new Uint8Array(600 * 1024),
      encrypt: false,
    });
    const waiting = await queue.submit({ payload: body(), owner: me.id });
    expect(await codeOf(queue.submit({ payload: body(), owner: me.id }))).toBe('JOB_QUEUE_FULL');
    await queue.cancel(waiting.job.id, me);
    await queue.cancel(busy.job.id, me);
    // The waiting job's bytes are given back: the next one fits.
    const next = await queue.submit({ payload: body(), owner: me.id });
    expect((await finished(queue, next.job.id, me)).status).toBe('succeeded');
  });

  it("counts a job's stored trace context against JOBS_MAX_STORED_BYTES", async () => {
    // A traced submission stores its context with the job (ADR 0048): those bytes are held too.
    const trace = JSON.stringify({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: `vendor=${'t'.repeat(1024 * 1024)}`,
    });
    const untraced: JobPayload = { task: 'factorial', input: { n: 3 }, encrypt: false };
    expect(await codeOf(queue.submit({ payload: { ...untraced, trace }, owner: me.id }))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    const { job } = await queue.submit({ payload: untraced, owner: me.id });
    expect((await finished(queue, job.id, me)).status).toBe('succeeded');
  });

  it('fails a job whose result is over JOBS_MAX_RESULT_BYTES, storing no result', async () => {
    const { job } = await queue.submit({ payload: factorial(5000), owner: me.id });
    const done = await finished(queue, job.id, me);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'TASK_FAILED' } });
    expect(done.result).toBeUndefined();
  });
});
