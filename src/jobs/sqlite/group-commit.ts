import { Errors } from '../../common/app-error';
import { BUSY_TIMEOUT_MS } from './sqlite-schema';
import type { SqliteJobStore } from './sqlite-job-store';
import {
  StoreWriter,
  type WriteArgs,
  type WriteMethod,
  type WriteOptions,
  type WriteResult,
} from './store-writer';

/** Calls per transaction at most, so that one commit holds its thread (and the lock) briefly. */
const MAX_BATCH = 256;
/**
 * How long a group retries a taken lock on every turn of the event loop
 * before it falls back to a 1 ms timer: retrying at once completed more jobs
 * than the timer (ADR 0017); the timer bounds what a long hold costs.
 */
const SPIN_MS = 2;
/**
 * On a thread of its own (`blockOnLock`), how long the writer sleeps between
 * two tries of a taken lock. Retrying on the next turn, as the event loop
 * does, is a busy spin on a thread with nothing else to do, which can take
 * the core from the other process's writer that holds the lock (ADR 0022).
 */
const LOCK_POLL_MS = 0.2;

/** How one call of a group ended, kept until the group's commit decides. */
interface Outcome {
  readonly ok: boolean;
  readonly value: unknown;
}

export interface GroupCommitOptions {
  /** Sleeps between tries of a taken lock, where blocking holds no event loop that serves requests. */
  readonly blockOnLock?: boolean;
  /**
   * Runs after each commit, before any of its callers is answered: an error
   * refuses the whole group instead (the writer thread confirms that the file it
   * wrote is still the store at its path, ADR 0042).
   */
  readonly confirm?: () => Error | undefined;
}

interface Call {
  readonly work: (store: SqliteJobStore) => unknown;
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Every write of this process, as a group commit: the calls of one turn of
 * the loop it runs on (the writer thread's, `writer-thread-entry.ts`, in the
 * service) run in one transaction, each in a savepoint of its own, and
 * each caller is answered after the commit. Its connection never waits for
 * another process's write lock (`busyTimeoutMs: 0`): `node:sqlite` is
 * synchronous, and SQLite's busy handler sleeps between its tries, holding
 * the loop it runs on for a large share of the time under load
 * (ADR 0017). When the lock is taken, the group tries again on the next turn
 * (an event loop serves requests in between) and grows, or, with
 * `blockOnLock` on a thread of its own, every LOCK_POLL_MS asleep; after
 * `BUSY_TIMEOUT_MS` its callers get the lock error (QUEUE_UNAVAILABLE).
 *
 * Calls marked `last` (claims) run after the plain calls of their group, in
 * the same transaction: a claim then sees the submissions and the finished
 * jobs before it, and a submission or a finished run and the claim it asked
 * for cost one commit and one reply (ADR 0030; ADR 0022 had given claims a
 * transaction of their own).
 */
export class GroupCommit extends StoreWriter {
  private calls: Call[] = [];
  private lastCalls: Call[] = [];
  private scheduled = false;
  /** When the lock was first found taken, for this group; 0 when it was not. */
  private busySince = 0;
  private closed = false;

  private readonly blockOnLock: boolean;
  private readonly sleeper = new Int32Array(new SharedArrayBuffer(4));
  private readonly confirm: (() => Error | undefined) | undefined;

  constructor(
    private readonly store: SqliteJobStore,
    options: GroupCommitOptions = {},
  ) {
    super();
    this.blockOnLock = options.blockOnLock === true;
    this.confirm = options.confirm;
  }

  call<M extends WriteMethod>(
    method: M,
    args: WriteArgs<M>,
    options?: WriteOptions,
  ): Promise<WriteResult<M>> {
    return this.write(
      (store) => (store[method] as (...a: unknown[]) => WriteResult<M>).apply(store, args),
      options,
    );
  }

  /** Runs `work` in the next group's transaction; resolves after its commit. */
  write<T>(work: (store: SqliteJobStore) => T, options: { last?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(Errors.queueUnavailable('SQLite: the store is closed'));
    return new Promise<T>((resolve, reject) => {
      (options.last === true ? this.lastCalls : this.calls).push({ work, resolve, reject });
      this.schedule(false);
    });
  }

  /** Writes what is waiting (if the lock is free), refuses the rest, and closes the connection. */
  close(): Promise<void> {
    this.closeNow();
    return Promise.resolve();
  }

  private closeNow(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.fail(Errors.queueUnavailable('SQLite: the store closed before the write'));
    this.store.close();
  }

  private schedule(busy: boolean): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.flush();
    };
    // Free, or taken for under SPIN_MS (another process's commit, short: ADR 0017): on the next turn,
    // after the calls of this one joined. Taken longer (a purge): every millisecond, on a timer.
    if (busy && Date.now() - this.busySince >= SPIN_MS) setTimeout(flush, 1);
    else setImmediate(flush);
  }

  private flush(): void {
    if (this.calls.length + this.lastCalls.length === 0) return;
    if (!this.lock()) return;
    const group = this.take();
    const outcomes = group.map((call): Outcome => {
      try {
        return { ok: true, value: this.store.transaction(() => call.work(this.store)) };
      } catch (error) {
        return { ok: false, value: error };
      }
    });
    try {
      this.store.commit();
    } catch (error) {
      this.store.rollback();
      for (const call of group) call.reject(error);
      return;
    }
    // After the commit, so that a file deleted or replaced at any moment before it is seen: no
    // caller is told its write is kept when the file it went to is no longer the store (ADR 0042).
    const refused = this.confirm?.();
    if (refused !== undefined) {
      for (const call of group) call.reject(refused);
      if (this.calls.length + this.lastCalls.length > 0) this.schedule(false);
      return;
    }
    group.forEach((call, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) call.resolve(outcome.value as never);
      else call.reject(outcome.value);
    });
    if (this.calls.length + this.lastCalls.length > 0) this.schedule(false);
  }

  /**
   * Takes the write lock for the next group. When another process holds it:
   * false, and the group is tried again (`schedule`), or its calls get the
   * lock error once `BUSY_TIMEOUT_MS` has passed (at once on a thread of its
   * own, which already slept that long in `beginWhenFree`).
   */
  private lock(): boolean {
    let began: boolean;
    try {
      began = this.store.begin() || (this.blockOnLock && this.beginWhenFree());
    } catch (error) {
      this.fail(error);
      return false;
    }
    if (began) {
      this.busySince = 0;
      return true;
    }
    const now = Date.now();
    if (this.busySince === 0) this.busySince = now;
    if (this.blockOnLock || now - this.busySince >= BUSY_TIMEOUT_MS) {
      this.busySince = 0;
      this.fail(Errors.queueUnavailable('SQLite: database is locked'));
    } else {
      this.schedule(true);
    }
    return false;
  }

  /** Tries the lock every LOCK_POLL_MS, asleep in between, for BUSY_TIMEOUT_MS at most. */
  private beginWhenFree(): boolean {
    const until = Date.now() + BUSY_TIMEOUT_MS;
    while (Date.now() < until) {
      Atomics.wait(this.sleeper, 0, 0, LOCK_POLL_MS);
      if (this.store.begin()) return true;
    }
    return false;
  }

  /**
   * The next group: up to MAX_BATCH plain calls, then up to MAX_BATCH claims.
   * Groups follow each other on separate turns (`schedule`), so the callers of
   * one are answered before the next runs.
   */
  private take(): Call[] {
    return this.calls.splice(0, MAX_BATCH).concat(this.lastCalls.splice(0, MAX_BATCH));
  }

  private fail(error: unknown): void {
    const calls = [...this.calls, ...this.lastCalls];
    this.calls = [];
    this.lastCalls = [];
    for (const call of calls) call.reject(error);
  }
}
