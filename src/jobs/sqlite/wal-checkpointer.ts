import { Worker } from 'node:worker_threads';

/**
 * Checkpoints the WAL on a thread of its own, and keeps it short. SQLite's
 * automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages,
 * and it syncs the file: on a busy disk that one commit held the event loop
 * for tens of ms (bench/results/2026-12-01-jobs.md). Here the automatic
 * checkpoint is off (`sqlite-schema.ts`) and this thread's own connection,
 * every `intervalMs`:
 *
 * 1. copies the WAL back into the database file (`PASSIVE`: it waits for no
 *    reader or writer), the bulk of the work;
 * 2. then `RESTART`s the WAL: under the write lock it copies what was
 *    committed during step 1, and makes the next commit write the WAL from
 *    its start again. Without it the WAL never restarted while writes kept
 *    coming (a commit always landed during the copy): it grew by ~45 MB a
 *    second at 500 submissions/s, and the first commit after a burst, when
 *    it finally restarted, cut the file back to `journal_size_limit` inside
 *    the commit: 85 ms for 262 MB (ADR 0026). With a restart per interval the
 *    WAL stays well under that limit, so no commit truncates it.
 *
 * Its connection has no busy timeout: a lock or a reader in the way makes
 * `RESTART` give up at once (the write lock is never waited for here), and
 * the next interval tries again.
 */
export class WalCheckpointer {
  private readonly worker: Worker;

  constructor(path: string, intervalMs: number) {
    this.worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { path, intervalMs } });
    // A checkpoint that cannot run is retried on the next interval; the thread never holds the process.
    this.worker.on('error', () => undefined);
    this.worker.unref();
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

const THREAD_SOURCE = `
const { DatabaseSync } = require('node:sqlite');
const { workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.path, { timeout: 0 });
setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    db.exec('PRAGMA wal_checkpoint(RESTART)');
  } catch {
    // busy: the next interval
  }
}, workerData.intervalMs);
`;
