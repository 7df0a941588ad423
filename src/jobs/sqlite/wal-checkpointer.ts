import { Worker } from 'node:worker_threads';
import { existingFileUrl } from './sqlite-store-file';

/**
 * Checkpoints the WAL on a thread of its own, and keeps it short. SQLite's
 * automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages,
 * and it syncs the file: on a busy disk that one commit held the event loop
 * (docs/adr/0026-the-wal-restarts-under-load.md). Here the automatic
 * checkpoint is off (`sqlite-schema.ts`) and this thread's own connection,
 * every `intervalMs`:
 *
 * 1. copies the WAL back into the database file (`PASSIVE`: it waits for no
 *    reader or writer), the bulk of the work;
 * 2. once the WAL holds `RESTART_FRAMES`, `RESTART`s it: under the write
 *    lock it copies what was committed during step 1, syncs, and makes the
 *    next commit write the WAL from its start again. Without it the WAL
 *    never restarted while writes kept coming (a commit always landed during
 *    the copy), and the first commit after a burst, when it finally
 *    restarted, cut the file back to `journal_size_limit` inside the commit,
 *    a stall of its own (ADR 0026). Restarted at half that limit, no commit
 *    truncates it. Not at every interval: the locked step syncs the file
 *    twice, and a restart at every interval held the writers more than a
 *    p99 can absorb (ADR 0026, "Why a threshold").
 *
 * Its connection has no busy timeout: a lock or a reader in the way makes
 * `RESTART` give up at once (the write lock is never waited for here), and
 * the next interval tries again.
 */
export class WalCheckpointer {
  private readonly worker: Worker;

  constructor(path: string, intervalMs: number) {
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      // Opened without creating: a checkpoint never makes a file where the store went missing.
      workerData: { url: existingFileUrl(path).href, intervalMs },
      name: 'wal-checkpoint',
    });
    // A checkpoint that cannot run is retried on the next interval; the thread never holds the process.
    this.worker.on('error', () => undefined);
    this.worker.unref();
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** WAL frames (pages, 4 KiB) from which it is restarted: half of `journal_size_limit` (64 MiB). */
const RESTART_FRAMES = 8192;

const THREAD_SOURCE = `
const { DatabaseSync } = require('node:sqlite');
const { workerData } = require('node:worker_threads');
const db = new DatabaseSync(new URL(workerData.url), { timeout: 0 });
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
setInterval(() => {
  try {
    if (passive.get().log >= ${RESTART_FRAMES}) db.exec('PRAGMA wal_checkpoint(RESTART)');
  } catch {
    // busy: the next interval
  }
}, workerData.intervalMs);
`;
