import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-job-store';

const payload = { task: 'factorial', input: { n: 5 }, encrypt: false };
const anyone = { id: 'owner', admin: false };
const LEASE_MS = 1000;

describe(SqliteJobStore.name, () => {
  let dir: string;
  const open = (options: Partial<SqliteStoreOptions> = {}) =>
    new SqliteJobStore({
      path: join(dir, 'jobs.sqlite'),
      maxStored: 100,
      maxStoredBytes: 1_000_000,
      resultTtlSeconds: 60,
      attempts: 2,
      backoffMs: 100,
      ...options,
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets another process claim a job whose lease expired, and fails it once the attempts are spent', () => {
    const [a, b] = [open(), open()];
    const { job } = a.insert(payload, 'owner', undefined, 0);
    expect(a.claim('a', 1, LEASE_MS, 10).map((claimed) => claimed.id)).toEqual([job.id]);
    // Neither process may take it while the lease holds.
    expect(b.claim('b', 1, LEASE_MS, 500)).toEqual([]);
    // `a` died: nobody renewed the lease.
    const takeover = b.claim('b', 1, LEASE_MS, 1011);
    expect(takeover).toMatchObject([{ id: job.id, attempts: 2 }]);
    // `a`'s late result does not count: the job is `b`'s now.
    expect(
      a.finish(job.id, 'a', { status: 'failed', error: { code: 'X', detail: '' } }),
    ).toBeUndefined();
    // `b` dies too, with no attempt left: the job fails as a crash.
    expect(a.claim('a', 1, LEASE_MS, 3000)).toEqual([]);
    expect(a.failAbandoned(3000)).toHaveLength(1);
    expect(a.get(job.id, anyone, 3000)).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { code: 'WORKER_CRASHED' },
    });
    a.close();
    b.close();
  });

  it('claims in order of due time across queued jobs and expired leases, within the limit', () => {
    const store = open();
    const ids = [0, 1, 2, 3].map((at) => store.insert(payload, 'owner', undefined, at).job.id);
    // The first job's run is abandoned: its lease ends at 1000 + 5 = 1005.
    expect(store.claim('dead', 1, LEASE_MS, 5).map((job) => job.id)).toEqual([ids[0]]);
    // At 2000: the queued ones were due at 1, 2, 3, the abandoned one at 1005.
    // (RETURNING lists rows in no set order: the sets are compared.)
    const claimed = (limit: number) =>
      store
        .claim('b', limit, LEASE_MS, 2000)
        .map((job) => job.id)
        .sort();
    expect(claimed(2)).toEqual([ids[1], ids[2]].sort());
    expect(claimed(5)).toEqual([ids[3], ids[0]].sort());
    store.close();
  });

  it('retries after a growing backoff, then records the end once', () => {
    const store = open();
    const { job } = store.insert(payload, 'owner', undefined, 0);
    store.claim('a', 1, LEASE_MS, 0);
    const retryError = { code: 'WORKER_CRASHED', detail: 'died' };
    expect(store.finish(job.id, 'a', { status: 'retry', error: retryError }, 10)).toBeDefined();
    expect(store.claim('a', 1, LEASE_MS, 50)).toEqual([]);
    expect(store.claim('a', 1, LEASE_MS, 111)).toHaveLength(1);
    const result = { value: 120, waitMs: 0, runMs: 1, runner: { host: 'h', pid: 1, threadId: 1 } };
    expect(store.finish(job.id, 'a', { status: 'succeeded', result }, 200)).toBeDefined();
    expect(store.finish(job.id, 'a', { status: 'succeeded', result }, 201)).toBeUndefined();
    const statuses = store.events(job.id, 0).map((event) => event.status);
    expect(statuses).toEqual(['queued', 'running', 'queued', 'running', 'succeeded']);
    store.close();
  });

  it('purges expired jobs with their events and frees their bytes', () => {
    const store = open({ resultTtlSeconds: 1 });
    const { job } = store.insert({ ...payload, body: new Uint8Array(5000) }, 'owner', undefined, 0);
    expect(store.totals()).toEqual({ jobs: 1, bytes: expect.any(Number) });
    expect(store.totals().bytes).toBeGreaterThan(5000);
    store.claim('a', 1, LEASE_MS, 0);
    store.finish(job.id, 'a', { status: 'failed', error: { code: 'TASK_FAILED', detail: '' } }, 10);
    expect(store.purgeExpired(100, 500)).toBe(0);
    expect(store.get(job.id, anyone, 1011)).toBeUndefined();
    expect(store.purgeExpired(100, 1011)).toBe(1);
    expect(store.events(job.id, 0)).toEqual([]);
    expect(store.totals()).toEqual({ jobs: 0, bytes: 0 });
    store.compact(100);
    store.close();
  });

  it('refuses a job when queued jobs fill the count, and makes room by dropping finished ones', () => {
    const store = open({ maxStored: 2 });
    const first = store.insert(payload, 'owner', undefined, 0).job;
    store.insert(payload, 'owner', undefined, 1);
    expect(() => store.insert(payload, 'owner', undefined, 2)).toThrow(
      expect.objectContaining({ code: 'JOB_QUEUE_FULL' }),
    );
    expect(store.cancelQueued(first.id, 3)).toBeDefined();
    expect(store.insert(payload, 'owner', undefined, 4).created).toBe(true);
    expect(store.get(first.id, anyone, 5)).toBeUndefined();
    store.close();
  });

  it('opens late: a forked process that found no store, or not a database, opens it once it is there, and never creates one', () => {
    const path = join(dir, 'jobs.sqlite');
    const forked = open({ create: false });
    expect(forked.opened).toMatchObject({ problem: expect.stringMatching(/^no job store at/) });
    expect(forked.reopen()).toBe(false);
    expect(existsSync(path)).toBe(false);

    writeFileSync(path, 'not a database, yet'.repeat(256));
    expect(forked.reopen()).toBe(false);
    expect(forked.opened).toMatchObject({
      problem: expect.stringMatching(/could not be opened \(file is not a database\)/),
    });
    expect(() => forked.counts()).toThrow(expect.objectContaining({ code: 'QUEUE_UNAVAILABLE' }));

    // The store restored over it, made elsewhere and moved in.
    const made = open({ path: join(dir, 'restored.sqlite') });
    const { identity } = made.opened as { identity: { storeId: string } };
    made.close();
    renameSync(join(dir, 'restored.sqlite'), path);
    expect(forked.reopen()).toBe(true);
    expect(forked.opened).toMatchObject({ identity: { path, storeId: identity.storeId } });
    expect(forked.counts()).toMatchObject({ queued: 0 });
    forked.close();
  });
});
