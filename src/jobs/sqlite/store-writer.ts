import type { SqliteJobStore } from './sqlite-job-store';

/** The store's methods that write: the only ones the writer runs. */
export type WriteMethod =
  | 'insert'
  | 'claimRunnable'
  | 'finish'
  | 'progress'
  | 'renewLeases'
  | 'failAbandoned'
  | 'cancelQueued'
  | 'requestCancel'
  | 'purgeExpired'
  | 'compact'
  | 'totals';

export type WriteArgs<M extends WriteMethod> = Parameters<SqliteJobStore[M]>;
export type WriteResult<M extends WriteMethod> = ReturnType<SqliteJobStore[M]>;

export interface WriteOptions {
  /** A claim: it runs after the plain writes of its group, in the same transaction. */
  readonly last?: boolean;
}

/**
 * Where this process's writes go, and the token they are injected by: a
 * store method by name and its arguments (plain data, so that they can cross
 * to a thread), run in the next group commit; the promise settles after its
 * commit. The service's is `WriterThreadClient` (the group commit on a
 * thread, ADR 0022); `GroupCommit` runs it on the caller's own loop.
 */
export abstract class StoreWriter {
  abstract call<M extends WriteMethod>(
    method: M,
    args: WriteArgs<M>,
    options?: WriteOptions,
  ): Promise<WriteResult<M>>;

  /** Writes what waits if it can, refuses the rest, and closes the connection. */
  abstract close(): Promise<void>;
}
