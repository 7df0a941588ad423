import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { WalCheckpointer } from './wal-checkpointer';

/**
 * Frames in the WAL now: `mxFrame` of the wal-index header, at byte 16 of the
 * `-shm` file in native (little-endian here) order (sqlite.org/walformat.html).
 * Read from the file rather than by `PRAGMA wal_checkpoint`, which would
 * checkpoint, and so let the WAL restart, by itself.
 */
const walFrames = (path: string) => readFileSync(`${path}-shm`).readUInt32LE(16);

/** How long the checkpointer gets to restart the WAL: ample on a busy machine, short of Jest's timeout. */
const RESTART_WAIT_MS = 20_000;

describe(WalCheckpointer.name, () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-wal-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('restarts the WAL while another connection keeps committing', async () => {
    const path = join(dir, 'jobs.sqlite');
    // It waits for the lock a restart holds, as the service's writer does (`group-commit.ts`).
    const writer = new DatabaseSync(path, { timeout: 1000 });
    writer.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0');
    writer.exec('CREATE TABLE t (x BLOB)');
    const insert = writer.prepare('INSERT INTO t VALUES (?)');
    // A row per page: past the 8,192 frames from which the checkpointer restarts the WAL.
    const row = Buffer.alloc(3500);
    writer.exec('BEGIN');
    for (let i = 0; i < 9000; i++) insert.run(row);
    writer.exec('COMMIT');
    const grown = walFrames(path);
    expect(grown).toBeGreaterThanOrEqual(9000);
    let inserted = 9000;
    const commitAFew = () => {
      for (let i = 0; i < 5; i++) insert.run(row);
      inserted += 5;
    };
    // Without a checkpointer the WAL only grows: what the test waits for below is its doing.
    commitAFew();
    expect(walFrames(path)).toBeGreaterThan(grown);

    const checkpointer = new WalCheckpointer(path, 5);
    try {
      // Commits on every turn, as under load: a passive checkpoint alone seldom finds the WAL
      // caught up at the next commit, so it never restarts it (ADR 0026).
      const until = Date.now() + RESTART_WAIT_MS;
      let frames = walFrames(path);
      while (frames >= grown && Date.now() < until) {
        commitAFew();
        frames = walFrames(path);
        await nextTurn();
      }
      // Restarted: the next commits wrote the WAL from its start again, and no row was lost.
      expect(frames).toBeLessThan(grown);
      expect(writer.prepare('SELECT count(*) AS rows FROM t').get()).toEqual({ rows: inserted });
    } finally {
      await checkpointer.stop();
      writer.close();
    }
  }, 30_000);
});
