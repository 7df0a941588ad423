import { statSync, type BigIntStats } from 'node:fs';
import type { StoreIdentity } from './sqlite-store-file';

/** What can happen to the file a process opened while it runs. */
export type StoreFileProblem = 'missing' | 'replaced' | 'read-only' | 'unreadable';

export interface StoreFileFinding {
  readonly problem: StoreFileProblem;
  /** For the log and the readiness details: what happened, in the operator's words. */
  readonly message: string;
}

/** Who the process is, for the mode bits that apply to it. */
export interface FileUser {
  readonly uid: number;
  readonly gids: readonly number[];
}

export const processUser = (): FileUser => ({
  uid: process.getuid?.() ?? -1,
  gids: process.getgroups?.() ?? [],
});

/**
 * Whether the file at the store's path is still the one this process opened
 * (same device and inode), and readable and writable by its mode bits: one
 * `stat`. An unlinked or moved file still takes this process's writes, but no
 * other process sees them and a restart loses them, so either is a problem.
 * The mode bits are the service's own policy, root included: root writes
 * through a mode of 0444, yet an operator who set it meant "no writes".
 */
export function checkStoreFile(
  identity: StoreIdentity,
  user: FileUser = processUser(),
): StoreFileFinding | undefined {
  const { path, storeId } = identity;
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    return {
      problem: 'unreadable',
      message: `${path} cannot be read: ${(error as Error).message}`,
    };
  }
  if (stats === undefined) {
    return {
      problem: 'missing',
      message: `no file at ${path}: job store ${storeId} was deleted or moved while it was open`,
    };
  }
  if (stats.dev !== identity.dev || stats.ino !== identity.ino) {
    return {
      problem: 'replaced',
      message:
        `the file at ${path} is not job store ${storeId}: another file took its place ` +
        `(device:inode ${identity.dev}:${identity.ino}, now ${stats.dev}:${stats.ino})`,
    };
  }
  const bits = modeBits(Number(stats.mode), Number(stats.uid), Number(stats.gid), user);
  const mode = (Number(stats.mode) & 0o777).toString(8).padStart(4, '0');
  if ((bits & 0o4) === 0) {
    return { problem: 'unreadable', message: `job store ${path} is not readable (mode ${mode})` };
  }
  if ((bits & 0o2) === 0) {
    return { problem: 'read-only', message: `job store ${path} was made read-only (mode ${mode})` };
  }
  return undefined;
}

/** The rwx bits that apply to `user`: the owner's for root too (see `checkStoreFile`). */
function modeBits(mode: number, uid: number, gid: number, user: FileUser): number {
  if (user.uid === 0 || user.uid === uid) return (mode >> 6) & 0o7;
  if (user.gids.includes(gid)) return (mode >> 3) & 0o7;
  return mode & 0o7;
}
