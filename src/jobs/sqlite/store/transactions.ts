import type { StoreConnection } from './store-connection';

/** SQLite's primary result code for a lock held by another connection. */
const SQLITE_BUSY = 5;

/**
 * Takes the write lock for a group of calls (`group-commit.ts`): false, at
 * once, when another connection holds it and this one waits for nothing
 * (`busyTimeoutMs: 0`). Each call inside is then a savepoint of its own.
 */
export function begin(store: StoreConnection): boolean {
  store.startCheckpoints();
  try {
    store.execute('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if ((error as { errcode?: number }).errcode === SQLITE_BUSY) return false;
    throw error;
  }
}

export function commit(store: StoreConnection): void {
  store.execute('COMMIT');
}

export function rollback(store: StoreConnection): void {
  if (store.inTransaction) store.execute('ROLLBACK');
}

/**
 * One write transaction, taken at once (`IMMEDIATE`): no upgrade from a read
 * lock to deadlock on. Inside a group's transaction (`begin`), a savepoint:
 * a call that fails undoes only its own writes.
 */
export function transaction<T>(store: StoreConnection, work: () => T): T {
  if (store.connection.isTransaction) return savepoint(store, work);
  store.startCheckpoints();
  store.execute('BEGIN IMMEDIATE');
  try {
    const result = work();
    store.execute('COMMIT');
    return result;
  } catch (error) {
    store.execute('ROLLBACK');
    throw error;
  }
}

function savepoint<T>(store: StoreConnection, work: () => T): T {
  store.execute('SAVEPOINT call');
  try {
    const result = work();
    store.execute('RELEASE call');
    return result;
  } catch (error) {
    store.execute('ROLLBACK TO call');
    store.execute('RELEASE call');
    throw error;
  }
}
