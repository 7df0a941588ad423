import type { DatabaseSync } from 'node:sqlite';

/**
 * How long a statement waits for another process's write lock before it
 * fails. Writes are single short transactions (ADR 0012), so a wait this
 * long means something is wrong; meanwhile the event loop waits too.
 */
export const BUSY_TIMEOUT_MS = 2000;

/** The WAL file is cut back to this size after a checkpoint, so it cannot grow without bound. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Opens the shared file the way every process must: WAL (readers never block
 * the writer), `synchronous=NORMAL` (durable across a process crash, which is
 * what takeovers need; a power loss may lose the last transactions), and
 * incremental auto-vacuum so the purge can give freed pages back to the disk,
 * and temporary b-trees in memory.
 * Creating the tables is idempotent: the first process to open a file
 * creates them, and one that finds a store an earlier release made brings it
 * up to date (`MIGRATIONS`, the only way a later release changes the schema).
 * The store's id is written once, by the first process that prepares the file
 * (`newStoreId`); every later one reads it. A file already prepared is opened
 * without the write lock: a process starting or respawning never makes
 * another's writes wait. Returns the store's id.
 */
export function prepareDatabase(db: DatabaseSync, newStoreId: string): string {
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  // Checkpoints run on a thread of their own (`wal-checkpointer.ts`), never inside a request's commit.
  db.exec('PRAGMA wal_autocheckpoint = 0');
  // A claim's `IN (…)` and `ORDER BY` go through temporary b-trees, of a few rows: in a temporary
  // file's pager (the default) they made a claim several times slower than in memory (ADR 0030).
  db.exec('PRAGMA temp_store = MEMORY');
  const prepared = preparedStoreId(db);
  if (prepared !== undefined) return prepared;
  // Kept in the file. Setting auto_vacuum takes the write lock, and only takes effect on a new
  // file (before the first table), which is when it matters.
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(SCHEMA);
    migrate(db);
    db.prepare(
      'INSERT OR IGNORE INTO store_identity (id, store_id, created_at) VALUES (1, ?, ?)',
    ).run(newStoreId, Date.now());
    const row = db.prepare('SELECT store_id FROM store_identity WHERE id = 1').get();
    db.exec('COMMIT');
    return row?.store_id as string;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/** The store's id when the file has every table and migration already; undefined otherwise. */
function preparedStoreId(db: DatabaseSync): string | undefined {
  const version = db.prepare('PRAGMA user_version').get()?.user_version as number;
  if (version < MIGRATIONS.length) return undefined;
  const identity = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'store_identity'")
    .get();
  if (identity === undefined) return undefined;
  return db.prepare('SELECT store_id FROM store_identity WHERE id = 1').get()?.store_id as
    string | undefined;
}

/**
 * Changes to the schema since the first release, in order, each applied once
 * to every store, new or existing: `PRAGMA user_version` counts those a file
 * has had. Run in the preparation's transaction, so concurrent starts apply
 * each once. Append only: a store never goes back to an earlier version,
 * and an earlier release ignores the columns it does not know.
 */
const MIGRATIONS: readonly string[] = [
  // The submitter's trace context, stored when its submission was traced (ADR 0048).
  'ALTER TABLE jobs ADD COLUMN trace_context TEXT',
];

function migrate(db: DatabaseSync): void {
  const version = db.prepare('PRAGMA user_version').get()?.user_version as number;
  if (version >= MIGRATIONS.length) return;
  for (const change of MIGRATIONS.slice(version)) db.exec(change);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  task TEXT NOT NULL,
  input TEXT NOT NULL,
  body BLOB,
  encrypt INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  run_after INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  expires_at INTEGER,
  lease_owner TEXT,
  lease_until INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  progress TEXT,
  result TEXT,
  error TEXT,
  idempotency_key TEXT,
  fingerprint TEXT,
  bytes INTEGER NOT NULL,
  last_event INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs (owner, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs (status, run_after);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (owner, created_at, id);
CREATE INDEX IF NOT EXISTS jobs_by_time ON jobs (created_at, id);
CREATE INDEX IF NOT EXISTS jobs_expiry ON jobs (expires_at) WHERE expires_at IS NOT NULL;
-- Which finished jobs make room first, without sorting the table at each submission.
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE IF NOT EXISTS job_events (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

-- Which store this file is: written once, when the file is made (docs/jobs.md).
CREATE TABLE IF NOT EXISTS store_identity (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  store_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

-- Kept by triggers, so that a submission checks the bounds without counting rows.
CREATE TABLE IF NOT EXISTS job_totals (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  jobs INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
INSERT OR IGNORE INTO job_totals (id, jobs, bytes) VALUES (1, 0, 0);

CREATE TRIGGER IF NOT EXISTS jobs_inserted AFTER INSERT ON jobs BEGIN
  UPDATE job_totals SET jobs = jobs + 1, bytes = bytes + new.bytes WHERE id = 1;
END;
CREATE TRIGGER IF NOT EXISTS jobs_deleted AFTER DELETE ON jobs BEGIN
  UPDATE job_totals SET jobs = jobs - 1, bytes = bytes - old.bytes WHERE id = 1;
  DELETE FROM job_events WHERE job_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS jobs_resized AFTER UPDATE OF bytes ON jobs BEGIN
  UPDATE job_totals SET bytes = bytes - old.bytes + new.bytes WHERE id = 1;
END;
`;
