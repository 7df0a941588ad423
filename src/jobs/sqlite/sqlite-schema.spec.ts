import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteJobStore } from './sqlite-job-store';

/** The `jobs` table as the release before the first migration made it. */
const FIRST_RELEASE_JOBS = `
CREATE TABLE jobs (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, task TEXT NOT NULL, input TEXT NOT NULL, body BLOB,
  encrypt INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL, created_at INTEGER NOT NULL, run_after INTEGER NOT NULL,
  started_at INTEGER, finished_at INTEGER, expires_at INTEGER, lease_owner TEXT, lease_until INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0, progress TEXT, result TEXT, error TEXT,
  idempotency_key TEXT, fingerprint TEXT, bytes INTEGER NOT NULL, last_event INTEGER NOT NULL DEFAULT 0
)`;

const TRACE = JSON.stringify({ traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` });
const anyone = { id: 'owner', admin: false };

describe('SQLite schema migrations', () => {
  let dir: string;
  let path: string;
  const open = () =>
    new SqliteJobStore({
      path,
      maxStored: 100,
      maxStoredBytes: 1_000_000,
      resultTtlSeconds: 60,
      attempts: 2,
      backoffMs: 100,
    });
  const columnsAndVersion = () => {
    const db = new DatabaseSync(path);
    try {
      return {
        columns: db
          .prepare('PRAGMA table_info(jobs)')
          .all()
          .map((column) => column.name),
        version: db.prepare('PRAGMA user_version').get()?.user_version,
      };
    } finally {
      db.close();
    }
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-schema-'));
    path = join(dir, 'jobs.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a store an earlier release made the trace column, keeping its jobs', () => {
    const old = new DatabaseSync(path);
    old.exec(FIRST_RELEASE_JOBS);
    old.exec(
      `INSERT INTO jobs (id, owner, task, input, encrypt, status, max_attempts, created_at, run_after, bytes)
         VALUES ('old-job', 'owner', 'factorial', '{"n":5}', 0, 'queued', 2, 1, 1, 7)`,
    );
    old.close();

    const store = open();
    try {
      expect(columnsAndVersion()).toEqual({
        columns: expect.arrayContaining(['trace_context']) as unknown,
        version: 1,
      });
      expect(store.get('old-job', anyone)).not.toHaveProperty('traceId');
      const { job } = store.insert(
        { task: 'factorial', input: { n: 6 }, encrypt: false, trace: TRACE },
        'owner',
        undefined,
        2,
      );
      expect(store.get(job.id, anyone)?.traceId).toBe('ab'.repeat(16));
      // Oldest first: the old job, without a context, then the traced one, with its context.
      const claimed = store.claim('here', 2, 1000, 10);
      expect(claimed.map(({ id, payload }) => [id, payload.trace])).toEqual([
        ['old-job', undefined],
        [job.id, TRACE],
      ]);
    } finally {
      store.close();
    }
  });

  it('migrates each store once: a new store is made at the latest version, and a second opening changes nothing', () => {
    open().close();
    const first = columnsAndVersion();
    expect(first.version).toBe(1);
    open().close();
    expect(columnsAndVersion()).toEqual(first);
  });
});
