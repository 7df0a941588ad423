import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { BUSY_TIMEOUT_MS, prepareDatabase } from './sqlite-schema';

/**
 * Which store a process opened: the id written in the file when it was made,
 * and the file's identity on disk. A file at the path with another device or
 * inode is another file, whatever its name.
 */
export interface StoreIdentity {
  readonly path: string;
  readonly storeId: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/** A store as a process opened it: which one, and whether this opening made it. */
export interface OpenedStore {
  readonly identity: StoreIdentity;
  readonly created: boolean;
  /** Where a WAL left without its database was put aside (`setOrphanedWalAside`). */
  readonly orphanedWal?: string;
}

/**
 * The file as SQLite opens it without ever creating it (`mode=rw`): a
 * process that finds no file must not make an empty one beside the store
 * the other processes still write (docs/jobs.md, "The store's identity").
 */
export function existingFileUrl(path: string): URL {
  const url = pathToFileURL(path);
  url.searchParams.set('mode', 'rw');
  return url;
}

/**
 * Opens the store at `path` and reads its identity. Only `create` (the
 * whole service starting: the cluster primary, or a process without one)
 * makes the file when there is none; otherwise a missing file throws.
 */
export function openStoreFile(
  path: string,
  options: { readonly create: boolean; readonly timeoutMs?: number },
): OpenedStore & { db: DatabaseSync } {
  const created = options.create && !existsSync(path);
  if (options.create) mkdirSync(dirname(path), { recursive: true });
  const orphanedWal = created ? setOrphanedWalAside(path) : undefined;
  const db = new DatabaseSync(options.create ? path : existingFileUrl(path), {
    timeout: options.timeoutMs ?? BUSY_TIMEOUT_MS,
  });
  try {
    const storeId = prepareDatabase(db, randomUUID());
    const { dev, ino } = statSync(path, { bigint: true });
    return {
      db,
      identity: { path, storeId, dev, ino },
      created,
      ...(orphanedWal === undefined ? {} : { orphanedWal }),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * At the service's start (the cluster primary, before it forks): creates the
 * store when no file exists, and says which store the processes will open.
 */
export function createStoreIfMissing(path: string): OpenedStore {
  const { db, ...opened } = openStoreFile(path, { create: true });
  db.close();
  return opened;
}

/**
 * A WAL without its database is what a store deleted while it ran leaves
 * behind: SQLite would replay its frames into the new, empty file. It is
 * kept beside, renamed, for the operator (its last transactions are in it).
 */
function setOrphanedWalAside(path: string): string | undefined {
  const wal = `${path}-wal`;
  if (!existsSync(wal)) return undefined;
  const aside = `${wal}.orphaned-${new Date().toISOString().replaceAll(':', '-')}`;
  renameSync(wal, aside);
  rmSync(`${path}-shm`, { force: true });
  return aside;
}
