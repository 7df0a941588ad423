import { Errors } from '../../../common/app-error';
import { totals } from './job-reads';
import type { StoreConnection } from './store-connection';
import type { SqliteStoreOptions } from './store-types';

/** Finished jobs dropped at least per submission that needs room: the next ones then find room. */
const EVICT_BATCH = 100;

/**
 * What leaves the store: jobs past their retention (the purge), the oldest
 * finished jobs when a submission needs room, and the pages they freed.
 */

/**
 * Keeps the store within its bounds: expired jobs go first, then the
 * oldest finished ones; when queued and running jobs alone fill it, the
 * submission is refused (JOB_QUEUE_FULL).
 */
export function makeRoom(
  store: StoreConnection,
  { maxStored, maxStoredBytes }: Pick<SqliteStoreOptions, 'maxStored' | 'maxStoredBytes'>,
  bytes: number,
  now: number,
): void {
  const fits = () => {
    const stored = totals(store);
    return stored.jobs < maxStored && stored.bytes + bytes <= maxStoredBytes;
  };
  if (fits()) return;
  purgeExpired(store, EVICT_BATCH, now);
  if (fits()) return;
  // A hundredth of the bound at once, so that a full store does this once per many submissions.
  store
    .statement(
      `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs WHERE finished_at IS NOT NULL ORDER BY finished_at LIMIT ?)`,
    )
    .run(Math.max(EVICT_BATCH, Math.ceil(maxStored / 100)));
  if (fits()) return;
  if (bytes > maxStoredBytes) throw Errors.payloadTooLarge(maxStoredBytes);
  throw Errors.jobQueueFull(maxStored);
}

/** Deletes up to `batch` expired jobs (and their events, by trigger); returns how many. */
export function purgeExpired(store: StoreConnection, batch: number, now: number): number {
  const { changes } = store
    .statement(
      `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)`,
    )
    .run(now, batch);
  return Number(changes);
}

/** Gives free pages back to the file system (the WAL is truncated on the checkpointer's thread). */
export function compact(store: StoreConnection, pages: number): void {
  store.connection.exec(`PRAGMA incremental_vacuum(${Math.floor(pages)})`);
}
