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
  /** Undefined when there was no store to open: every call is then QUEUE_UNAVAILABLE. */
  private readonly db: DatabaseSync | undefined;
  /** Which store this connection opened, or why it opened none. */
  readonly opened: OpenedStore | { readonly problem: string };
  /** Compiled once per SQL text: compiling costs about as much as running these statements. */
  private readonly statements = new Map<string, StatementSync>();
  private checkpointer: WalCheckpointer | undefined;

  constructor(private readonly options: ConnectionOptions) {
    const create = options.create ?? true;
    let opened: ReturnType<typeof openStoreFile>;
    try {
      opened = openStoreFile(options.path, { create, timeoutMs: options.busyTimeoutMs });
    } catch (error) {
      // The service's start reports it and stops; a forked process serves without a store.
      if (create) throw error;
      this.opened = {
        problem: `no job store at ${options.path} to open (${(error as Error).message})`,
      };
      return;
    }
    const { storeId } = opened.identity;
    if (options.storeId !== undefined && storeId !== options.storeId) {
      opened.db.close();
      this.opened = {
        problem: `the file at ${options.path} is job store ${storeId}, not ${options.storeId}`,
      };
      return;
    }
    const { db, ...store } = opened;
    this.db = db;
    this.opened = store;
  }

  close(): void {
    void this.checkpointer?.stop();
    if (this.db?.isOpen === true) this.db.close();
  }

  /** The connection, or QUEUE_UNAVAILABLE with the reason there is none. */
  get connection(): DatabaseSync {
    if (this.db !== undefined) return this.db;
    throw Errors.queueUnavailable(
      'problem' in this.opened ? this.opened.problem : 'the job store is not open',
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
