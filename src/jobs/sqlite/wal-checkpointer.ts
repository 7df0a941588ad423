import { Worker } from 'node:worker_threads';

/**
 * Checkpoints the WAL on a thread of its own. SQLite's automatic checkpoint
 * runs inside whichever commit crosses 1,000 WAL pages, and it syncs the
 * file: on a busy disk that one commit held the event loop for tens of ms
 * (bench/results/2026-12-01-jobs.md). Here the automatic checkpoint is off
 * (`sqlite-schema.ts`) and this thread's own connection copies the WAL back
 * every `intervalMs` (`PASSIVE`: it waits for no reader or writer), so no
 * request ever pays for it. Every `TRUNCATE_EVERY`th time it also truncates
 * the WAL file, when no reader is in the way (else the next time).
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

/** One checkpoint in this many also truncates the WAL file (once a minute at 1 s). */
const TRUNCATE_EVERY = 60;

const THREAD_SOURCE = `
const { DatabaseSync } = require('node:sqlite');
const { workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.path, { timeout: 0 });
let runs = 0;
setInterval(() => {
  runs += 1;
  try {
    db.exec(runs % ${TRUNCATE_EVERY} === 0 ? 'PRAGMA wal_checkpoint(TRUNCATE)' : 'PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // busy: the next interval
  }
}, workerData.intervalMs);
`;
