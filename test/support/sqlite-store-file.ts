import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqliteStoreOptions } from '../../src/jobs/sqlite/sqlite-job-store';

/**
 * For a spec: a fresh directory per test, removed after it, and small store
 * options in it (2 jobs at most, so that a third submission is refused).
 */
export function storeFilePerTest(prefix: string): () => SqliteStoreOptions {
  let dir: string;
  let options: SqliteStoreOptions;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    options = {
      path: join(dir, 'jobs.sqlite'),
      maxStored: 2,
      maxStoredBytes: 1_000_000,
      resultTtlSeconds: 60,
      attempts: 2,
      backoffMs: 100,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return () => options;
}
