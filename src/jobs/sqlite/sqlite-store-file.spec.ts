import { existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStoreIfMissing, openStoreFile } from './sqlite-store-file';

describe(createStoreIfMissing.name, () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-store-file-'));
    path = join(dir, 'data', 'jobs.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the store once, and finds the same store, by its id, on the next start', () => {
    const first = createStoreIfMissing(path);
    const second = createStoreIfMissing(path);
    expect(first.created).toBe(true);
    expect(second).toEqual({ ...first, created: false });
  });

  it('gives every process that opens the file later the id it was made with', () => {
    const { identity } = createStoreIfMissing(path);
    const { db, ...opened } = openStoreFile(path, { create: false });
    db.close();
    expect(opened).toEqual({ identity, created: false });
  });

  it('opens a prepared store while another connection holds the write lock, without waiting for it', () => {
    const { identity } = createStoreIfMissing(path);
    const writer = openStoreFile(path, { create: false });
    writer.db.exec('BEGIN IMMEDIATE');
    try {
      const { db, ...opened } = openStoreFile(path, { create: false, timeoutMs: 0 });
      db.close();
      expect(opened.identity).toEqual(identity);
    } finally {
      writer.db.exec('ROLLBACK');
      writer.db.close();
    }
  });

  it('never creates a file when opening without `create`', () => {
    expect(() => openStoreFile(path, { create: false })).toThrow('unable to open database file');
    expect(existsSync(path)).toBe(false);
  });

  it('keeps a write-ahead log left without its database aside, rather than replay it into a new store', () => {
    const { db, identity } = openStoreFile(path, { create: true });
    db.exec('UPDATE job_totals SET jobs = 0 WHERE id = 1');
    // Deleted while open, as a cleanup job would; its process was then killed: the WAL stays behind.
    unlinkSync(path);
    expect(existsSync(`${path}-wal`)).toBe(true);
    const again = createStoreIfMissing(path);
    expect(again.created).toBe(true);
    expect(again.identity.storeId).not.toBe(identity.storeId);
    expect(again.orphanedWal).toMatch(/jobs\.sqlite-wal\.orphaned-/);
    expect(readdirSync(join(dir, 'data'))).toContain(again.orphanedWal?.split('/').at(-1));
    db.close();
  });
});
