import { existsSync } from 'node:fs';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Errors } from '../../../common/app-error';
import { openStoreFile, type OpenedStore } from '../sqlite-store-file';
import { WalCheckpointer } from '../wal-checkpointer';
import type { SqliteStoreOptions } from './store-types';

/**
 * How often the WAL is copied back into the database file, off the event
 * loop (and restarted once it holds `RESTART_FRAMES`, `wal-checkpointer.ts`):
 * often enough that under load the restart's locked step finds little left
 * to copy (docs/adr/0026-the-wal-restarts-under-load.md).
 */
const CHECKPOINT_INTERVAL_MS = 250;

type ConnectionOptions = Pick<SqliteStoreOptions, 'path' | 'create' | 'busyTimeoutMs' | 'storeId'>;

/**
 * One connection to the store's file, from its opening to its closing: the
 * file opened (or why none was), its prepared statements, and the WAL
 * checkpointer that its first write starts.
 */
export class StoreConnection {
  /** Undefined while there is no store open: every call is then QUEUE_UNAVAILABLE. */
  private db: DatabaseSync | undefined;
  private current: OpenedStore | { readonly problem: string };
  /** Compiled once per SQL text: compiling costs about as much as running these statements. */
  private readonly statements = new Map<string, StatementSync>();
  private checkpointer: WalCheckpointer | undefined;

  constructor(private readonly options: ConnectionOptions) {
    this.current = this.open();
  }

  /** Which store this connection opened, or why it opened none. */
  get opened(): OpenedStore | { readonly problem: string } {
    return this.current;
  }

  /**
   * Tries again to open the store, when none is open: a forked process whose
   * first try failed (a file being restored, a lock, a transient I/O error)
   * serves once it succeeds, without a restart (docs/jobs.md). True once open.
   */
  reopen(): boolean {
    if (this.db === undefined) this.current = this.open();
    return this.db !== undefined;
  }

  private open(): OpenedStore | { readonly problem: string } {
    const { path } = this.options;
    const create = this.options.create ?? true;
    let opened: ReturnType<typeof openStoreFile>;
    try {
      opened = openStoreFile(path, { create, timeoutMs: this.options.busyTimeoutMs });
    } catch (error) {
      // The service's start reports it and stops; a forked process serves without a store.
      if (create) throw error;
      const reason = (error as Error).message;
      return {
        problem: existsSync(path)
          ? `the job store at ${path} could not be opened (${reason})`
          : `no job store at ${path} to open (${reason})`,
      };
    }
    const { storeId } = opened.identity;
    if (this.options.storeId !== undefined && storeId !== this.options.storeId) {
      opened.db.close();
      return {
        problem: `the file at ${path} is job store ${storeId}, not ${this.options.storeId}`,
      };
    }
    const { db, ...store } = opened;
    this.db = db;
    return store;
  }

  close(): void {
    void this.checkpointer?.stop();
    if (this.db?.isOpen === true) this.db.close();
  }

  /** The connection, or QUEUE_UNAVAILABLE with the reason there is none. */
  get connection(): DatabaseSync {
    if (this.db !== undefined) return this.db;
    throw Errors.queueUnavailable(
      'problem' in this.current ? this.current.problem : 'the job store is not open',
    );
  }

  /** Whether a transaction is open; false, never an error, without a connection. */
  get inTransaction(): boolean {
    return this.db?.isTransaction === true;
  }

  statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.connection.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * A statement without parameters (a transaction's own), prepared once:
   * `exec` parsed each of them again, four or more per write, a large share
   * of the writer thread's time (docs/adr/0030-the-writer-parses-nothing-twice.md).
   */
  execute(sql: string): void {
    this.statement(sql).run();
  }

  /** Started by the first write: a process that never writes (no jobs) costs no thread. */
  startCheckpoints(): void {
    if (this.db === undefined) return;
    this.checkpointer ??= new WalCheckpointer(this.options.path, CHECKPOINT_INTERVAL_MS);
  }
}
